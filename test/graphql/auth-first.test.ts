import { rawBody, rawExchange } from '../support/raw-http';
import { startGateway, type TestGateway } from '../support/testkit';

const LIMIT = 64 * 1024;

/** A POST that announces `length` bytes of JSON and sends only the first few. */
const announced = (path: string, length: number, headers: Record<string, string> = {}) =>
  [
    `POST ${path} HTTP/1.1`,
    'Host: gateway',
    'Content-Type: application/json',
    'Accept: application/json, text/event-stream',
    `Content-Length: ${length}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    '',
    '{"query":"',
  ].join('\r\n');

describe('the token before the body (issue 36)', () => {
  let t: TestGateway;
  let token: string;
  beforeAll(async () => {
    t = await startGateway({ env: { HTTP_BODY_LIMIT_BYTES: String(LIMIT) } });
    token = t.token({ userId: 'alice' });
  });
  afterAll(() => t.close());

  it.each([
    ['/graphql', { errors: [{ message: 'missing bearer token', extensions: { code: 'UNAUTHENTICATED' } }] }],
    ['/graphql/stream', { errors: [{ message: 'missing bearer token', extensions: { code: 'UNAUTHENTICATED' } }] }],
    ['/api/ai/agent/execute', { errorCode: 'UNAUTHENTICATED', errorMessage: 'missing bearer token' }],
  ])('answers POST %s without a token 401 at once, without waiting for (or reading) its body', async (path, body) => {
    // 5 MB announced, a few bytes sent: the answer cannot have waited for the body.
    const exchange = await rawExchange(t.url, { head: announced(path, 5_000_000), waitMs: 5_000 });
    expect(exchange.status).toBe(401);
    expect(rawBody(exchange.text)).toEqual(body);
    // The rest of the body is not read: the connection closes after the answer.
    expect(exchange.text).toMatch(/\r\nconnection: close\r\n/i);
    expect(exchange.closedAfterMs).not.toBeNull();
  });

  it('answers a wrong token 401 the same way', async () => {
    const exchange = await rawExchange(t.url, { head: announced('/graphql', 5_000_000, { Authorization: 'Bearer not-a-jwt' }), waitMs: 5_000 });
    expect(exchange.status).toBe(401);
    expect(exchange.closedAfterMs).not.toBeNull();
  });

  it('answers malformed JSON without a token 401, not 400', async () => {
    for (const path of ['/graphql', '/api/ai/agent/execute', '/graphql/stream']) {
      const res = await fetch(`${t.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' });
      expect([path, res.status]).toEqual([path, 401]);
    }
  });

  it('refuses an announced body over the limit 413 before reading it', async () => {
    const exchange = await rawExchange(t.url, { head: announced('/graphql', LIMIT + 1, { Authorization: `Bearer ${token}` }), waitMs: 5_000 });
    expect(exchange.status).toBe(413);
    expect(rawBody(exchange.text)).toEqual({ errors: [{ message: 'the request body is too large', extensions: { code: 'BAD_USER_INPUT' } }] });
    expect(exchange.closedAfterMs).not.toBeNull();
  });

  it('refuses a chunked body 413 as soon as it passes the limit, without waiting for its end', async () => {
    const head = ['POST /api/ai/agent/execute HTTP/1.1', 'Host: gateway', 'Content-Type: application/json', 'Transfer-Encoding: chunked', `Authorization: Bearer ${token}`, '', ''].join('\r\n');
    const piece = `${(16 * 1024).toString(16)}\r\n${'x'.repeat(16 * 1024)}\r\n`;
    // Five 16 KiB chunks pass the 64 KiB limit; the body never ends (no zero-length chunk).
    const exchange = await rawExchange(t.url, { head, drip: { pieces: Array.from({ length: 50 }, () => piece), everyMs: 20 }, waitMs: 5_000 });
    expect(exchange.status).toBe(413);
    expect(rawBody(exchange.text)).toEqual({ errorCode: 'BAD_USER_INPUT', errorMessage: 'the request body is too large' });
    expect(exchange.closedAfterMs).toBeLessThan(50 * 20);
  });

  it('still reads and answers a valid body, and keeps that connection', async () => {
    const res = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: '{ me { roles } }' }),
    });
    expect([res.status, res.headers.get('connection'), await res.json()]).toEqual([200, 'keep-alive', { data: { me: { roles: [] } } }]);
  });

  it('refuses a compressed or non-UTF-8 body 415', async () => {
    const post = (headers: Record<string, string>) =>
      fetch(`${t.url}/api/ai/agent/execute`, { method: 'POST', headers: { authorization: `Bearer ${token}`, ...headers }, body: '{}' });
    const gz = await post({ 'content-type': 'application/json', 'content-encoding': 'gzip' });
    expect([gz.status, ((await gz.json()) as { errorCode: string }).errorCode]).toEqual([415, 'BAD_USER_INPUT']);
    const latin = await post({ 'content-type': 'application/json; charset=iso-8859-1' });
    expect(latin.status).toBe(415);
  });
});
