import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LlmError, type LlmRequest } from '../../src/llm/llm.port';
import { OpenAIResponsesAdapter } from '../../src/llm/openai-responses.adapter';
import { OfflineLanguageModel } from '../../src/llm/offline.adapter';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.requests.length = 0;
});

const adapter = (overrides: { timeoutMs?: number; maxRetries?: number; maxDelayMs?: number; onRetry?: () => void; baseURL?: string } = {}) =>
  new OpenAIResponsesAdapter({
    apiKey: 'sk-test',
    baseURL: overrides.baseURL ?? fake.url,
    timeoutMs: overrides.timeoutMs ?? 5000,
    retry: { maxRetries: overrides.maxRetries ?? 2, maxDelayMs: overrides.maxDelayMs ?? 5000 },
    onRetry: overrides.onRetry,
  });

const request = (extra: Partial<LlmRequest> = {}): LlmRequest => ({
  model: 'gpt-4.1-mini',
  instructions: 'You are careful.',
  temperature: 0.2,
  previousResponseId: null,
  input: [{ type: 'message', role: 'user', text: 'Explain the retry policy.' }],
  tools: [],
  ...extra,
});

const call = (a: OpenAIResponsesAdapter, req = request(), signal = new AbortController().signal) => {
  const deltas: string[] = [];
  return { deltas, result: a.respond(req, { signal, onTextDelta: (d) => deltas.push(d) }) };
};

const failureOf = async (p: Promise<unknown>): Promise<LlmError> => {
  try {
    await p;
  } catch (e) {
    if (e instanceof LlmError) return e;
    throw e;
  }
  throw new Error('expected the call to fail');
};

describe('OpenAI Responses adapter against a local Responses API', () => {
  it('streams the answer piece by piece and returns it whole, with the provider usage', async () => {
    fake.enqueue({ kind: 'text', chunks: ['Retries ', 'honour ', 'retry-after.'], usage: { input: 42, output: 7 } });
    const { deltas, result } = call(adapter());
    const response = await result;
    expect(deltas).toEqual(['Retries ', 'honour ', 'retry-after.']);
    expect(response.text).toBe('Retries honour retry-after.');
    expect(response.responseId).toMatch(/^resp_/);
    expect(response.usage).toEqual({ inputTokens: 42, outputTokens: 7, cachedInputTokens: 0 });
    expect(response.toolCalls).toEqual([]);
    const body = fake.requests[0]?.body;
    expect(body).toMatchObject({
      model: 'gpt-4.1-mini',
      instructions: 'You are careful.',
      temperature: 0.2,
      stream: true,
      store: true,
      input: [{ type: 'message', role: 'user', content: 'Explain the retry policy.' }],
    });
    expect(body).not.toHaveProperty('previous_response_id');
    expect(body).not.toHaveProperty('tools');
    expect(fake.requests[0]?.headers).toMatchObject({ authorization: 'Bearer sk-test', 'content-type': 'application/json' });
  });

  it('sends the organization and project headers only when configured (OPENAI_ORG_ID, OPENAI_PROJECT_ID)', async () => {
    fake.enqueue({ kind: 'text', chunks: ['ok'], usage: null });
    fake.enqueue({ kind: 'text', chunks: ['ok'], usage: null });
    const scoped = new OpenAIResponsesAdapter({
      apiKey: 'sk-test',
      baseURL: fake.url,
      organization: 'org-acme',
      project: 'proj_gateway',
      timeoutMs: 5000,
      retry: { maxRetries: 0, maxDelayMs: 0 },
    });
    await call(scoped).result;
    await call(adapter()).result;
    expect(fake.requests[0]?.headers).toMatchObject({ 'openai-organization': 'org-acme', 'openai-project': 'proj_gateway' });
    expect(fake.requests[1]?.headers).not.toHaveProperty('openai-organization');
    expect(fake.requests[1]?.headers).not.toHaveProperty('openai-project');
  });

  it('reports no usage when the provider sends none', async () => {
    fake.enqueue({ kind: 'text', chunks: ['ok'], usage: null });
    expect((await call(adapter()).result).usage).toBeNull();
  });

  it('chains with previous_response_id and answers function calls with function_call_output items', async () => {
    fake.enqueue({ kind: 'tool_calls', text: 'Let me look.', calls: [{ name: 'read_file', arguments: '{"path":"a.ts"}' }, { name: 'run_tests', arguments: '{}' }] });
    const tools = [{ name: 'read_file', description: 'Reads a file', parametersJson: '{"type":"object","properties":{"path":{"type":"string"}}}' }, { name: 'run_tests', description: null, parametersJson: '{"type":"object"}' }];
    const first = await call(adapter(), request({ tools })).result;
    expect(first.text).toBe('Let me look.');
    expect(first.toolCalls.map((c) => [c.name, c.argumentsJson])).toEqual([
      ['read_file', '{"path":"a.ts"}'],
      ['run_tests', '{}'],
    ]);
    expect(fake.requests[0]?.body.tools).toEqual([
      { type: 'function', name: 'read_file', description: 'Reads a file', parameters: { type: 'object', properties: { path: { type: 'string' } } }, strict: false },
      { type: 'function', name: 'run_tests', parameters: { type: 'object' }, strict: false },
    ]);

    fake.enqueue({ kind: 'text', chunks: ['All green.'] });
    const input = first.toolCalls.map((c) => ({ type: 'function_call_output' as const, callId: c.toolCallId, output: '{"ok":true}' }));
    const second = await call(adapter(), request({ previousResponseId: first.responseId, input, tools })).result;
    expect(second.text).toBe('All green.');
    expect(fake.requests[1]?.body).toMatchObject({
      previous_response_id: first.responseId,
      input: first.toolCalls.map((c) => ({ type: 'function_call_output', call_id: c.toolCallId, output: '{"ok":true}' })),
    });
  });

  it('retries a 429 after the provider retry-after, then answers, counting the retry', async () => {
    fake.enqueue({ kind: 'http_error', status: 429, headers: { 'retry-after': '1' }, message: 'Rate limit reached' }, { kind: 'text', chunks: ['late but fine'] });
    let retries = 0;
    const started = Date.now();
    const response = await call(adapter({ onRetry: () => retries++ })).result;
    expect(response.text).toBe('late but fine');
    expect(fake.requests).toHaveLength(2);
    expect(retries).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('does not retry when the provider asks to wait longer than the gateway allows', async () => {
    fake.enqueue({ kind: 'http_error', status: 429, headers: { 'retry-after': '120' } });
    let retries = 0;
    const started = Date.now();
    const error = await failureOf(call(adapter({ maxDelayMs: 2000, onRetry: () => retries++ })).result);
    expect(error.kind).toBe('failed');
    expect(error.message).toBe('the model provider is rate limiting requests (HTTP 429); the provider asked to wait 120 s, longer than the gateway waits');
    expect(fake.requests).toHaveLength(1);
    expect(retries).toBe(0);
    expect(Date.now() - started).toBeLessThan(1000);

    fake.requests.length = 0;
    fake.enqueue({ kind: 'http_error', status: 503, headers: { 'retry-after-ms': '2500' } });
    expect((await failureOf(call(adapter({ maxDelayMs: 2000 })).result)).message).toBe(
      'the model provider failed (HTTP 503); the provider asked to wait 3 s, longer than the gateway waits',
    );
    expect(fake.requests).toHaveLength(1);
  });

  it('retries 5xx with backoff and gives up after LLM_MAX_RETRIES', async () => {
    fake.enqueue({ kind: 'http_error', status: 500 }, { kind: 'http_error', status: 503, headers: { 'retry-after-ms': '10' } }, { kind: 'text', chunks: ['recovered'] });
    let retries = 0;
    const started = Date.now();
    expect((await call(adapter({ onRetry: () => retries++ })).result).text).toBe('recovered');
    expect(fake.requests).toHaveLength(3);
    expect(retries).toBe(2);
    // Without a hint the first retry backs off 500 ms, less up to a quarter of jitter.
    expect(Date.now() - started).toBeGreaterThanOrEqual(370);

    fake.requests.length = 0;
    fake.enqueue({ kind: 'http_error', status: 502 }, { kind: 'http_error', status: 502 });
    const error = await failureOf(call(adapter({ maxRetries: 1 })).result);
    expect(error.message).toBe('the model provider failed (HTTP 502); no recovery after 1 retries');
    expect(fake.requests).toHaveLength(2);
  });

  it('retries a provider it cannot reach, then says so', async () => {
    let retries = 0;
    const unreachable = adapter({ baseURL: 'http://127.0.0.1:1/v1', maxRetries: 1, maxDelayMs: 1000, onRetry: () => retries++ });
    const error = await failureOf(call(unreachable).result);
    expect(error.kind).toBe('failed');
    expect(error.message).toBe('could not reach the model provider; no recovery after 1 retries');
    expect(retries).toBe(1);
  });

  it('does not retry a stream that broke mid-answer (the text already went out)', async () => {
    fake.enqueue({ kind: 'broken', chunks: ['half an ', 'answer'] });
    const { deltas, result } = call(adapter());
    const error = await failureOf(result);
    expect(error.kind).toBe('failed');
    expect(error.message).toBe('the connection to the model provider broke while streaming');
    expect(deltas.join('')).toBe('half an answer');
    expect(fake.requests).toHaveLength(1);
  });

  it('times out a provider that never answers and closes the connection', async () => {
    fake.enqueue({ kind: 'hang' });
    const error = await failureOf(call(adapter({ timeoutMs: 300 })).result);
    expect(error.kind).toBe('timeout');
    expect(error.message).toBe('the model did not finish answering within 300 ms');
    await waitFor(() => fake.requests[0]?.closedByClient === true);
    expect(fake.requests).toHaveLength(1);
  });

  it('times out a stream that stalls after some text, without retrying (the text already went out)', async () => {
    fake.enqueue({ kind: 'stall', chunks: ['half an ', 'answer'] });
    const { deltas, result } = call(adapter({ timeoutMs: 400 }));
    const error = await failureOf(result);
    expect(error.kind).toBe('timeout');
    expect(deltas.join('')).toBe('half an answer');
    expect(fake.requests).toHaveLength(1);
  });

  it('stops at once when the caller aborts mid-stream', async () => {
    fake.enqueue({ kind: 'stall', chunks: ['partial'] });
    const controller = new AbortController();
    const { deltas, result } = call(adapter(), request(), controller.signal);
    await waitFor(() => deltas.length > 0);
    controller.abort();
    expect((await failureOf(result)).kind).toBe('aborted');
    await waitFor(() => fake.requests[0]?.closedByClient === true);
  });

  it('stops at once when the caller aborts while waiting to retry', async () => {
    fake.enqueue({ kind: 'http_error', status: 429, headers: { 'retry-after': '1' } });
    const controller = new AbortController();
    const { result } = call(adapter(), request(), controller.signal);
    await fake.waitForRequests(1);
    const aborted = Date.now();
    controller.abort();
    expect((await failureOf(result)).kind).toBe('aborted');
    expect(Date.now() - aborted).toBeLessThan(200);
    // Past the retry-after, no second attempt went out.
    await new Promise((r) => setTimeout(r, 1200));
    expect(fake.requests).toHaveLength(1);
  });

  it('counts the retry waits in the deadline of the call', async () => {
    fake.enqueue({ kind: 'http_error', status: 429, headers: { 'retry-after': '1' } });
    const started = Date.now();
    const error = await failureOf(call(adapter({ timeoutMs: 400 })).result);
    expect(error.kind).toBe('timeout');
    expect(error.message).toBe('the model did not finish answering within 400 ms');
    expect(Date.now() - started).toBeLessThan(900);
    // Past the retry-after, no second attempt went out.
    await new Promise((r) => setTimeout(r, 800));
    expect(fake.requests).toHaveLength(1);
  });

  it.each([
    ['an error event mid-stream', { kind: 'stream_error' as const, chunks: ['so far'], message: 'The server had an error while processing your request.' }, 'the model provider reported an error while streaming: The server had an error while processing your request.'],
    ['a failed response', { kind: 'failed' as const, message: 'model overloaded' }, 'the model provider failed the response: model overloaded'],
    ['a refused request', { kind: 'http_error' as const, status: 400, message: "Invalid value for 'temperature'." }, "the model provider rejected the request (HTTP 400): Invalid value for 'temperature'."],
    ['refused credentials, never quoting the provider', { kind: 'http_error' as const, status: 401, message: 'Incorrect API key provided: sk-abc***xyz.' }, "the model provider refused the gateway's credentials (HTTP 401); check OPENAI_API_KEY"],
  ])('maps %s to a clear turn error', async (_what, reply, message) => {
    fake.enqueue(reply);
    const error = await failureOf(call(adapter({ maxRetries: 0 })).result);
    expect(error.kind).toBe('failed');
    expect(error.message).toBe(message);
  });

  it('says so when the provider no longer knows previous_response_id', async () => {
    const first = await call(adapter()).result;
    fake.forget(first.responseId);
    const error = await failureOf(call(adapter(), request({ previousResponseId: first.responseId })).result);
    expect(error.kind).toBe('chain_lost');
    expect(error.message).toBe('the model provider no longer knows the previous response (HTTP 400)');
    expect(fake.requests).toHaveLength(2);
  });
});

describe('OpenAI Responses adapter: what arrives on the wire', () => {
  let server: Server;
  let url: string;
  let reply: (res: ServerResponse) => void = (res) => res.end();
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => reply(res));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const response = { id: 'resp_wire', object: 'response', model: 'gpt-4.1-mini', output: [], usage: null };
  const event = (data: Record<string, unknown>, end = '\n') => `event: ${String(data.type)}${end}data: ${JSON.stringify(data)}${end}${end}`;

  it('reads events split anywhere, CRLF lines, comments and multi-byte text included', async () => {
    reply = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const wire =
        event({ type: 'response.created', response: { ...response, status: 'in_progress' } }, '\r\n') +
        ': keep-alive\n\n' +
        event({ type: 'response.output_text.delta', delta: 'h\u00e9llo ' }, '\r\n') +
        event({ type: 'response.output_text.delta', delta: 'w\u00f6rld' }) +
        event({ type: 'response.completed', response });
      const bytes = Buffer.from(wire, 'utf8');
      // One byte at a time: a multi-byte character and every line end are split across chunks.
      let i = 0;
      const next = () => (i < bytes.length ? res.write(bytes.subarray(i, ++i), () => setImmediate(next)) : res.end());
      next();
    };
    const { deltas, result } = call(adapter({ baseURL: url, timeoutMs: 20_000 }));
    expect((await result).text).toBe('h\u00e9llo w\u00f6rld');
    expect(deltas).toEqual(['h\u00e9llo ', 'w\u00f6rld']);
  });

  it('reports an error object streamed in place of an event', async () => {
    reply = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${JSON.stringify({ error: { message: 'The server had an error.', type: 'server_error' } })}\n\n`);
    };
    const error = await failureOf(call(adapter({ baseURL: url })).result);
    expect(error.message).toBe('the model provider reported an error while streaming: The server had an error.');
  });
});

describe('offline adapter', () => {
  it('answers deterministically, labelled, in several pieces, from what the model would receive', async () => {
    const model = new OfflineLanguageModel();
    const req = request({ input: [{ type: 'message', role: 'user', text: `## Retrieved context\nsnippet one\n\nFix the bug.${'x'.repeat(3000)}` }] });
    const run = () => {
      const deltas: string[] = [];
      return model.respond(req, { signal: new AbortController().signal, onTextDelta: (d) => deltas.push(d) }).then((r) => ({ r, deltas }));
    };
    const [a, b] = await Promise.all([run(), run()]);
    expect(a.r.text).toBe(b.r.text);
    expect(a.r.text).toContain('**Offline answer.**');
    expect(a.r.text).toContain('snippet one');
    expect(a.r.text).toContain('Fix the bug.');
    expect(a.deltas.length).toBeGreaterThan(3);
    expect(a.deltas.join('')).toBe(a.r.text);
    expect(a.r.usage).toBeNull();
    expect(model.modelFor('gpt-4.1')).toBe('offline');
  });
});

async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
