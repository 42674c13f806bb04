import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProviderConnectionError, ProviderHttpError, ProviderTimeout, SseJsonClient } from '../../src/llm/responses-client';

/** The wire details of the streaming client the OpenAI adapter uses, against a raw HTTP server. */
let server: Server;
let url: string;
let reply: (res: ServerResponse) => void = (res) => res.end();
const seen: { headers: Record<string, unknown>; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen.push({ headers: req.headers, body });
      reply(res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const collect = async (client = new SseJsonClient({ baseURL: url, headers: { authorization: 'Bearer sk-test' } }), timeoutMs = 2000) => {
  const events: unknown[] = [];
  await client.stream('responses', '{"stream":true}', { signal: new AbortController().signal, timeoutMs }, (d) => events.push(d));
  return events;
};

describe('streaming Responses client', () => {
  it('posts the JSON body with its headers and parses events split anywhere, CRLF lines and multi-line data included', async () => {
    reply = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const wire = 'event: a\r\ndata: {"type":"a","text":"h\u00e9llo"}\r\n\r\n: comment\n\ndata: {"type":"b",\ndata: "n":2}\n\ndata: [DONE]\n\n';
      const bytes = Buffer.from(wire, 'utf8');
      // One byte at a time: a multi-byte character and every line end are split across chunks.
      let i = 0;
      const next = () => (i < bytes.length ? res.write(bytes.subarray(i, ++i), () => setImmediate(next)) : res.end());
      next();
    };
    seen.length = 0;
    expect(await collect()).toEqual([
      { type: 'a', text: 'h\u00e9llo' },
      { type: 'b', n: 2 },
    ]);
    expect(seen[0]?.body).toBe('{"stream":true}');
    expect(seen[0]?.headers).toMatchObject({ authorization: 'Bearer sk-test', 'content-type': 'application/json', accept: 'text/event-stream' });
  });

  it('reports an HTTP error with the status, the provider message and code, and its headers', async () => {
    reply = (res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' });
      res.end(JSON.stringify({ error: { message: 'slow down', code: 'rate_limit_exceeded' } }));
    };
    const error = await collect().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderHttpError);
    expect(error).toMatchObject({ status: 429, providerMessage: 'slow down', code: 'rate_limit_exceeded' });
    expect((error as ProviderHttpError).headers.get('Retry-After')).toBe('3');
  });

  it('tells a provider it cannot reach from a stream that broke mid-answer', async () => {
    const unreachable = new SseJsonClient({ baseURL: 'http://127.0.0.1:1/v1', headers: {} });
    expect(await collect(unreachable).catch((e: unknown) => e)).toMatchObject({ name: 'ProviderConnectionError', phase: 'connect' });

    reply = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"type":"a"}\n\n', () => res.socket?.destroy());
    };
    const broken = await collect().catch((e: unknown) => e);
    expect(broken).toBeInstanceOf(ProviderConnectionError);
    expect(broken).toMatchObject({ phase: 'stream' });
  });

  it('gives up at its deadline and closes the connection', async () => {
    let closed = false;
    reply = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"type":"a"}\n\n');
      res.on('close', () => (closed = true));
    };
    expect(await collect(undefined, 200).catch((e: unknown) => e)).toBeInstanceOf(ProviderTimeout);
    for (let i = 0; i < 100 && !closed; i++) await new Promise((r) => setTimeout(r, 10));
    expect(closed).toBe(true);
  });
});
