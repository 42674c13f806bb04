import { AsyncLocalStorage } from 'node:async_hooks';
import { once } from 'node:events';
import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { jsonBody } from '../../src/server/json-body';

const LIMIT = 64;
/** Stands in for the trace context the HTTP instrumentation sets before the body is read. */
const requestContext = new AsyncLocalStorage<string>();

/** The same route behind express.json and behind jsonBody: what each handler saw, or the error's status and type. */
function app(): express.Express {
  const a = express();
  const report: RequestHandler = (req, res) => {
    res.json({ body: req.body === undefined ? '(none)' : req.body, context: requestContext.getStore() ?? '(lost)' });
  };
  a.use((req, _res, next) => requestContext.run(`request ${req.path}`, next));
  a.post('/express', express.json({ limit: LIMIT }), report);
  a.post('/lean', jsonBody(LIMIT), report);
  a.use(((err: { status?: number; type?: string }, _req, res, _next) => {
    res.status(err.status ?? 500).json({ error: err.type ?? 'other' });
  }) as ErrorRequestHandler);
  return a;
}

/** Raw HTTP, so a body can come without Content-Length (chunked) or without any body headers. */
function send(port: number, path: string, headers: Record<string, string>, body: Buffer | string | null, chunked = false): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ port, path, method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    if (body === null) req.end();
    else if (chunked) {
      const buf = Buffer.from(body);
      req.write(buf.subarray(0, buf.length >> 1));
      req.end(buf.subarray(buf.length >> 1));
    } else req.end(body);
  });
}

describe('the JSON body reader', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = app().listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const json = { 'content-type': 'application/json' };
  const cases: [string, Record<string, string>, Buffer | string | null, boolean][] = [
    ['an object', json, '{"query":"{ me { id } }","variables":{"n":1}}', false],
    ['an array', json, '[1,2]', false],
    ['UTF-8 text', { 'content-type': 'application/json; charset=utf-8' }, '{"q":"é ✓ 𝄞"}', false],
    ['a quoted upper-case charset', { 'content-type': 'application/json; charset="UTF-8"' }, '{"a":1}', false],
    ['an empty body', { ...json, 'content-length': '0' }, '', false],
    ['whitespace only', json, '  \n', false],
    ['a bare string', json, '"text"', false],
    ['a number after whitespace', json, ' 42', false],
    ['invalid JSON', json, '{not json', false],
    ['a body over the limit', json, `{"a":"${'x'.repeat(LIMIT)}"}`, false],
    ['a chunked body over the limit', json, `{"a":"${'x'.repeat(LIMIT)}"}`, true],
    ['a chunked body', json, '{"a":[1,2,3]}', true],
    ['no body at all', json, null, false],
    ['a gzipped body', { ...json, 'content-encoding': 'gzip' }, gzipSync('{"zipped":true}'), false],
    ['another charset', { 'content-type': 'application/json; charset=utf-16le' }, Buffer.from('{"a":1}', 'utf16le'), false],
    ['another type', { 'content-type': 'text/plain' }, '{"a":1}', false],
  ];

  it.each(cases)('answers %s as express.json does', async (_name, headers, body, chunked) => {
    const expected = await send(port, '/express', headers, body, chunked);
    const actual = await send(port, '/lean', headers, body, chunked);
    expect(actual).toEqual({ ...expected, body: expected.body.replace('request /express', 'request /lean') });
  });

  it('gives the body to the handler and refuses what express.json refuses (spot checks)', async () => {
    expect(await send(port, '/lean', json, '{"a":1}')).toEqual({ status: 200, body: '{"body":{"a":1},"context":"request /lean"}' });
    expect(await send(port, '/lean', json, '{not json')).toEqual({ status: 400, body: '{"error":"entity.parse.failed"}' });
    expect(await send(port, '/lean', json, `[${'1,'.repeat(LIMIT)}1]`)).toEqual({ status: 413, body: '{"error":"entity.too.large"}' });
  });
});
