import { once } from 'node:events';
import { createServer, IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { plainLane, type PlainHandler } from '../../src/server/plain-lane';

/** A real HTTP server whose every request runs `handlers`; a failure answers 500 with the error's message. */
async function serve(handlers: readonly PlainHandler[], failures: unknown[]): Promise<{ url: string; server: Server }> {
  const lane = plainLane(handlers, (error, _req, res) => {
    failures.push(error);
    res.statusCode = 500;
    res.end(error instanceof Error ? error.message : String(error));
  });
  const server = createServer(lane).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('the plain lane', () => {
  const servers: Server[] = [];
  afterAll(async () => {
    for (const s of servers) await new Promise<void>((r) => s.close(() => r()));
  });

  async function run(handlers: readonly PlainHandler[]): Promise<{ status: number; text: string; failures: unknown[] }> {
    const failures: unknown[] = [];
    const { url, server } = await serve(handlers, failures);
    servers.push(server);
    const res = await fetch(`${url}/graphql`, { method: 'POST', body: '{}' });
    return { status: res.status, text: await res.text(), failures };
  }

  it('runs the handlers in order on node:http\'s own request and response, with express\'s locals', async () => {
    const seen: string[] = [];
    const answer = await run([
      (req, res, next) => {
        // express's application layer would have swapped both prototypes (app.request, app.response).
        seen.push(`first ${Object.getPrototypeOf(req) === IncomingMessage.prototype} ${Object.getPrototypeOf(res) === ServerResponse.prototype}`);
        res.locals.id = 'r-1';
        next();
      },
      async (_req, res, next) => {
        await new Promise((r) => setTimeout(r, 5));
        seen.push(`second ${String(res.locals.id)}`);
        next();
      },
      (_req, res) => {
        seen.push('third');
        res.end('answered');
      },
    ]);
    expect(answer).toEqual({ status: 200, text: 'answered', failures: [] });
    expect(seen).toEqual(['first true true', 'second r-1', 'third']);
  });

  it.each<[string, PlainHandler]>([
    ['next(error)', (_req, _res, next) => next(new Error('refused'))],
    ['a throw', () => {
      throw new Error('refused');
    }],
    ['a rejected promise', async () => {
      await Promise.resolve();
      throw new Error('refused');
    }],
  ])('stops at %s: the handlers after it do not run and the failure answers once', async (_name, failing) => {
    let after = 0;
    const answer = await run([failing, () => void after++]);
    expect(answer.status).toBe(500);
    expect(answer.text).toBe('refused');
    expect(answer.failures).toHaveLength(1);
    expect(after).toBe(0);
  });

  it('answers through the failure when every handler passed the request on', async () => {
    const answer = await run([(_req, _res, next) => next()]);
    expect([answer.status, answer.text]).toEqual([500, 'no handler of the lane answered the request']);
  });
});
