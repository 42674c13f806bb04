import { rawExchange } from '../support/raw-http';
import { sleep, subscribe, wsClient } from '../support/ws';
import { startGateway, type TestGateway } from '../support/testkit';
import { capturingLogger } from '../support/log-capture';

const HEADERS_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 2_000;
/** node:http looks for expired requests once a second. */
const CHECK_MS = 1_000;

const ACTIVITY = 'subscription A { sessionActivity { eventId } }';

describe('slow clients are cut (issue 36)', () => {
  let t: TestGateway;
  let token: string;
  const { logger, lines: logLines } = capturingLogger('info');
  beforeAll(async () => {
    t = await startGateway({
      env: { HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS), HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) },
      logger,
    });
    token = t.token({ userId: 'alice' });
  });
  afterAll(() => t.close());

  it('cuts headers that trickle in after HTTP_HEADERS_TIMEOUT_MS', async () => {
    const exchange = await rawExchange(t.url, {
      head: 'GET /healthz HTTP/1.1\r\nHost: gateway\r\n',
      drip: { pieces: Array.from({ length: 40 }, (_, i) => `X-Drip-${i}: 1\r\n`), everyMs: 200 },
      waitMs: 8_000,
    });
    expect(exchange.status).toBe(408);
    expect(exchange.closedAfterMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS);
    expect(exchange.closedAfterMs).toBeLessThan(HEADERS_TIMEOUT_MS + CHECK_MS + 1_000);
  });

  it('cuts a body that trickles in after HTTP_REQUEST_TIMEOUT_MS', async () => {
    const head = ['POST /graphql HTTP/1.1', 'Host: gateway', 'Content-Type: application/json', 'Content-Length: 1000', `Authorization: Bearer ${token}`, '', '{'].join('\r\n');
    const exchange = await rawExchange(t.url, { head, drip: { pieces: Array.from({ length: 60 }, () => ' '), everyMs: 100 }, waitMs: 8_000 });
    expect(exchange.status).toBe(408);
    expect(exchange.closedAfterMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS);
    expect(exchange.closedAfterMs).toBeLessThan(REQUEST_TIMEOUT_MS + CHECK_MS + 1_000);
  });

  it('leaves an event stream open past HTTP_REQUEST_TIMEOUT_MS: the answer is not bound by it', async () => {
    const head = [
      `GET /graphql/stream?query=${encodeURIComponent(ACTIVITY)} HTTP/1.1`,
      'Host: gateway',
      'Accept: text/event-stream',
      `Authorization: Bearer ${token}`,
      '',
      '',
    ].join('\r\n');
    const exchange = await rawExchange(t.url, { head, waitMs: REQUEST_TIMEOUT_MS + 2 * CHECK_MS });
    expect(exchange.status).toBe(200);
    expect(exchange.closedAfterMs).toBeNull();
  });

  it('leaves a WebSocket open past both timeouts: it follows its own keep-alive rules', async () => {
    const closes: number[] = [];
    const client = wsClient(t.url, token, { onClosed: (code) => closes.push(code) });
    const sub = subscribe(client, ACTIVITY);
    await sleep(REQUEST_TIMEOUT_MS + 2 * CHECK_MS);
    expect(closes).toEqual([]);
    // Still served: a query on the same socket answers.
    const answer = subscribe(client, '{ me { roles } }');
    expect((await answer.waitFor(1))[0]).toEqual({ data: { me: { roles: [] } } });
    sub.unsubscribe();
    await client.dispose();
  });

  it('keeps an idle keep-alive connection past HTTP_HEADERS_TIMEOUT_MS for its next request', async () => {
    const get = 'GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n';
    const exchange = await rawExchange(t.url, { head: get, drip: { pieces: [get], everyMs: HEADERS_TIMEOUT_MS + 2 * CHECK_MS }, waitMs: HEADERS_TIMEOUT_MS + 3 * CHECK_MS });
    expect(exchange.text.match(/HTTP\/1\.1 200/g)).toHaveLength(2);
    expect(exchange.text).not.toMatch(/408/);
  });

  it('logs a client that went away mid-body at info, without a stack', async () => {
    logLines.length = 0;
    const head = ['POST /api/ai/agent/execute HTTP/1.1', 'Host: gateway', 'Content-Type: application/json', 'Content-Length: 1000', `Authorization: Bearer ${token}`, '', '{"agentContextId":'].join('\r\n');
    // The client closes its socket 300 ms in, 980 bytes short.
    const exchange = await rawExchange(t.url, { head, waitMs: 300 });
    expect(exchange.status).toBeNull();
    await new Promise((r) => setTimeout(r, 300));
    const gone = logLines.filter((l) => l.msg === 'the client went away before its answer was sent');
    expect(gone).toHaveLength(1);
    expect(gone[0]).toMatchObject({ level: 30, where: 'POST /api/ai/agent/execute' });
    expect(JSON.stringify(gone[0])).not.toMatch(/stack/);
    expect(logLines.filter((l) => Number(l.level) >= 50)).toEqual([]);
  });
});
