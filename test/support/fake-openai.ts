import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A local stand-in for the OpenAI Responses API (POST /v1/responses, and /v1/embeddings for
 * retrieval), faithful enough for the openai SDK: JSON answers and SSE streams with the real event sequence, function
 * calls, usage, HTTP errors with retry-after, error events, and requests that hang. It
 * remembers the responses it created, so previous_response_id and function_call_output are
 * checked as the real API checks them, and it records every request body it received.
 */
export interface FakeUsage {
  readonly input: number;
  readonly output: number;
  /** Of `input`, tokens served from the prompt cache (usage.input_tokens_details.cached_tokens). */
  readonly cached?: number;
}

export type FakeReply =
  /** An answer, streamed in these pieces. `usage: null` leaves usage out of the response. */
  | {
      readonly kind: 'text';
      readonly chunks: readonly string[];
      readonly usage?: FakeUsage | null;
      readonly delayMs?: number;
      /** The model the response says answered; default: the requested one, dated as OpenAI does (`setDatedModels`). */
      readonly model?: string;
    }
  /** The model calls tools, client or server (optionally after some text): function_call output items. */
  | {
      readonly kind: 'tool_calls';
      readonly calls: readonly { readonly name: string; readonly arguments: string }[];
      readonly text?: string;
      readonly usage?: FakeUsage | null;
      readonly model?: string;
    }
  | { readonly kind: 'http_error'; readonly status: number; readonly headers?: Readonly<Record<string, string>>; readonly message?: string; readonly code?: string }
  /** Accepts the request and never answers. */
  | { readonly kind: 'hang' }
  /** Streams these pieces, then stalls without completing. */
  | { readonly kind: 'stall'; readonly chunks: readonly string[] }
  /** Streams these pieces, then the connection breaks (the socket is destroyed mid-answer). */
  | { readonly kind: 'broken'; readonly chunks: readonly string[] }
  /** Streams these pieces, then an `error` event. */
  | { readonly kind: 'stream_error'; readonly chunks: readonly string[]; readonly message: string }
  /** A `response.failed` event, with the usage the provider reports for it when given. */
  | { readonly kind: 'failed'; readonly message: string; readonly usage?: FakeUsage; readonly model?: string };

export interface RecordedRequest {
  readonly body: Record<string, unknown>;
  readonly headers: IncomingMessage['headers'];
  /** True once the client closed the connection before the answer was complete (an abort). */
  closedByClient: boolean;
}

export interface FakeOpenAIOptions {
  /** Delay before the first byte of every answer (the bench's provider latency). */
  readonly latencyMs?: number;
  /** Skip recording bodies (the bench sends thousands). */
  readonly record?: boolean;
}

export interface FakeOpenAI {
  /** Base URL for the SDK: http://127.0.0.1:PORT/v1 */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Requests received and not yet answered (or abandoned) right now. */
  readonly open: number;
  /** The next requests get these replies, in order; after them the default replies. */
  enqueue(...replies: FakeReply[]): void;
  /** Replaces the default reply (initially: a short answer quoting the instruction). */
  setDefault(reply: (body: Record<string, unknown>) => FakeReply): void;
  /** Answers name a dated snapshot of the requested model (`gpt-4.1-mini` -> `gpt-4.1-mini-2025-04-14`), as OpenAI's do. */
  setDatedModels(dated: boolean): void;
  /** Forgets a stored response, as the provider does when its state expires early. */
  forget(responseId: string): void;
  /** Delay before the first byte of the answers from now on (the bench warms up at 0, then measures at its latency). */
  setLatency(ms: number): void;
  /** Waits until `n` requests have arrived. */
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

interface StoredResponse {
  readonly callIds: readonly string[];
}

export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const requests: RecordedRequest[] = [];
  const queue: FakeReply[] = [];
  const stored = new Map<string, StoredResponse>();
  const sockets = new Set<Socket>();
  const waiters: { n: number; resolve: () => void }[] = [];
  let open = 0;
  let dated = false;
  let latencyMs = options.latencyMs ?? 0;
  let fallback = (body: Record<string, unknown>): FakeReply => ({
    kind: 'text',
    chunks: ['Answer to: ', lastUserText(body).slice(0, 40), ' — done.'],
  });

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch(() => res.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!/^Bearer \S+/.test(req.headers.authorization ?? '')) return sendError(res, 401, 'You did not provide an API key.');
    if (req.method === 'POST' && req.url === '/v1/embeddings') return embeddings(JSON.parse(await readBody(req)) as Record<string, unknown>, res);
    if (req.method !== 'POST' || req.url !== '/v1/responses') return sendError(res, 404, `Unknown path ${req.url}`);
    const body = JSON.parse(await readBody(req)) as Record<string, unknown>;
    const record: RecordedRequest = { body: options.record === false ? {} : body, headers: req.headers, closedByClient: false };
    requests.push(record);
    open++;
    res.on('close', () => {
      open--;
      if (!res.writableFinished) record.closedByClient = true;
    });
    for (const w of waiters.filter((w) => requests.length >= w.n)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
    const invalid = checkChain(body);
    if (invalid) return sendError(res, 400, invalid.message, invalid.param, invalid.code);
    const reply = queue.shift() ?? fallback(body);
    if (latencyMs) await new Promise((r) => setTimeout(r, latencyMs));
    await answer(body, reply, res);
  }

  /** What the real API refuses about previous_response_id and tool outputs. */
  function checkChain(body: Record<string, unknown>): { message: string; param: string; code?: string } | null {
    const previous = body.previous_response_id;
    // The API also takes the input as one string (the bench's baseline sends one).
    const input = Array.isArray(body.input) ? (body.input as { type?: string; call_id?: string }[]) : [];
    if (previous === undefined || previous === null) {
      // Without a previous response, an output must answer a function_call item of the same input.
      const calls = new Set(input.filter((i) => i.type === 'function_call').map((i) => i.call_id));
      const orphan = input.find((i) => i.type === 'function_call_output' && !calls.has(i.call_id));
      return orphan ? { message: `No tool call found for function call output with call_id ${String(orphan.call_id)}.`, param: 'input' } : null;
    }
    const previousId = typeof previous === 'string' ? previous : JSON.stringify(previous);
    const prior = stored.get(previousId);
    if (!prior) {
      return { message: `Previous response with id '${previousId}' not found.`, param: 'previous_response_id', code: 'previous_response_not_found' };
    }
    const outputs = new Set(input.filter((i) => i.type === 'function_call_output').map((i) => i.call_id));
    const missing = prior.callIds.find((id) => !outputs.has(id));
    return missing ? { message: `No tool output found for function call ${missing}.`, param: 'input' } : null;
  }

  async function answer(body: Record<string, unknown>, reply: FakeReply, res: ServerResponse): Promise<void> {
    if (reply.kind === 'http_error') {
      return sendError(res, reply.status, reply.message ?? `HTTP ${reply.status}`, null, reply.code, reply.headers);
    }
    if (reply.kind === 'hang') return;
    const id = `resp_${randomUUID().replace(/-/g, '')}`;
    const stream = body.stream === true;
    const script = scriptOf(reply, body);
    const callIds = script.items.flatMap((i) => (i.type === 'function_call' ? [i.call_id] : []));
    const given = 'model' in reply ? reply.model : undefined;
    const model = given ?? (dated ? `${String(body.model)}-2025-04-14` : body.model);
    const response = { ...responseObject(id, body, script.items, script.usage, 'completed'), model };
    if (!stream) {
      if (reply.kind !== 'text' && reply.kind !== 'tool_calls') return sendError(res, 500, 'The server had an error.');
      stored.set(id, { callIds });
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': `req_${id}` });
      res.end(JSON.stringify(response));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-request-id': `req_${id}` });
    let seq = 0;
    const emit = (data: Record<string, unknown>) => {
      res.write(`event: ${String(data.type)}\ndata: ${JSON.stringify({ ...data, sequence_number: seq++ })}\n\n`);
    };
    const inProgress = responseObject(id, body, [], null, 'in_progress');
    emit({ type: 'response.created', response: inProgress });
    emit({ type: 'response.in_progress', response: inProgress });
    for (const [index, item] of script.items.entries()) {
      if (res.destroyed) return;
      await streamItem(emit, item, index, script, res);
    }
    if (reply.kind === 'stall') return;
    if (reply.kind === 'broken') {
      res.write('', () => res.socket?.destroy());
      return;
    }
    if (reply.kind === 'stream_error') {
      emit({ type: 'error', code: 'server_error', message: reply.message, param: null });
      res.end();
      return;
    }
    if (reply.kind === 'failed') {
      const failed = { ...responseObject(id, body, [], null, 'failed'), model, usage: reply.usage ? usageObject(reply.usage) : null };
      emit({ type: 'response.failed', response: { ...failed, error: { code: 'server_error', message: reply.message } } });
      res.end();
      return;
    }
    stored.set(id, { callIds });
    emit({ type: 'response.completed', response });
    res.end();
  }

  return {
    url: await listen(server),
    requests,
    get open() {
      return open;
    },
    enqueue: (...replies) => void queue.push(...replies),
    setDefault: (reply) => {
      fallback = reply;
    },
    setDatedModels: (value) => {
      dated = value;
    },
    forget: (responseId) => void stored.delete(responseId),
    setLatency: (ms) => {
      latencyMs = ms;
    },
    waitForRequests: (n, timeoutMs = 10_000) =>
      requests.length >= n
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`only ${requests.length} of ${n} requests arrived`)), timeoutMs);
            waiters.push({ n, resolve: () => (clearTimeout(timer), resolve()) });
          }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

type OutputItem =
  | { type: 'message'; id: string; status: string; role: 'assistant'; content: { type: 'output_text'; text: string; annotations: []; logprobs: [] }[] }
  | { type: 'function_call'; id: string; status: string; call_id: string; name: string; arguments: string };

interface Script {
  readonly items: OutputItem[];
  /** The text pieces of the message item, in streaming order. */
  readonly pieces: readonly string[];
  readonly delayMs: number;
  readonly usage: Record<string, unknown> | null;
}

function scriptOf(reply: Exclude<FakeReply, { kind: 'http_error' | 'hang' }>, body: Record<string, unknown>): Script {
  const pieces =
    reply.kind === 'tool_calls' ? (reply.text ? [reply.text] : []) : reply.kind === 'failed' ? [] : [...reply.chunks];
  const text = pieces.join('');
  const items: OutputItem[] = [];
  if (pieces.length > 0) {
    items.push({
      type: 'message',
      id: `msg_${randomUUID().replace(/-/g, '')}`,
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
    });
  }
  if (reply.kind === 'tool_calls') {
    for (const call of reply.calls) {
      items.push({
        type: 'function_call',
        id: `fc_${randomUUID().replace(/-/g, '')}`,
        status: 'completed',
        call_id: `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`,
        name: call.name,
        arguments: call.arguments,
      });
    }
  }
  const given = reply.kind === 'text' || reply.kind === 'tool_calls' ? reply.usage : undefined;
  const input = given?.input ?? Math.ceil(JSON.stringify(body.input ?? '').length / 4) + 12;
  const output = given?.output ?? Math.max(1, Math.ceil((text.length + JSON.stringify(items).length / 8) / 4));
  const usage = given === null ? null : usageObject({ input, output, cached: given?.cached ?? 0 });
  return { items, pieces, delayMs: reply.kind === 'text' ? (reply.delayMs ?? 0) : 0, usage };
}

function usageObject(usage: FakeUsage): Record<string, unknown> {
  return {
    input_tokens: usage.input,
    input_tokens_details: { cached_tokens: usage.cached ?? 0 },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.input + usage.output,
  };
}

async function streamItem(
  emit: (data: Record<string, unknown>) => void,
  item: OutputItem,
  index: number,
  script: Script,
  res: ServerResponse,
): Promise<void> {
  if (item.type === 'message') {
    emit({ type: 'response.output_item.added', output_index: index, item: { ...item, status: 'in_progress', content: [] } });
    const part = { type: 'output_text', text: '', annotations: [], logprobs: [] };
    emit({ type: 'response.content_part.added', item_id: item.id, output_index: index, content_index: 0, part });
    for (const delta of script.pieces) {
      if (script.delayMs) await new Promise((r) => setTimeout(r, script.delayMs));
      if (res.destroyed) return;
      emit({ type: 'response.output_text.delta', item_id: item.id, output_index: index, content_index: 0, delta, logprobs: [] });
    }
    const text = script.pieces.join('');
    emit({ type: 'response.output_text.done', item_id: item.id, output_index: index, content_index: 0, text, logprobs: [] });
    emit({ type: 'response.content_part.done', item_id: item.id, output_index: index, content_index: 0, part: { ...part, text } });
    emit({ type: 'response.output_item.done', output_index: index, item });
    return;
  }
  emit({ type: 'response.output_item.added', output_index: index, item: { ...item, status: 'in_progress', arguments: '' } });
  const half = Math.ceil(item.arguments.length / 2);
  for (const delta of [item.arguments.slice(0, half), item.arguments.slice(half)]) {
    emit({ type: 'response.function_call_arguments.delta', item_id: item.id, output_index: index, delta });
  }
  emit({ type: 'response.function_call_arguments.done', item_id: item.id, output_index: index, arguments: item.arguments });
  emit({ type: 'response.output_item.done', output_index: index, item });
}

function responseObject(
  id: string,
  body: Record<string, unknown>,
  output: OutputItem[],
  usage: Record<string, unknown> | null,
  status: string,
): Record<string, unknown> {
  return {
    id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: null,
    model: body.model,
    output,
    parallel_tool_calls: true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: null, summary: null },
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: body.tools ?? [],
    top_p: 1,
    truncation: 'disabled',
    usage: status === 'completed' ? usage : null,
    user: null,
    metadata: {},
  };
}

/** POST /v1/embeddings (retrieval embeds the instruction): deterministic unit vectors, float or base64 as asked. */
function embeddings(body: Record<string, unknown>, res: ServerResponse): void {
  const inputs = Array.isArray(body.input) ? (body.input as string[]) : [String(body.input)];
  const dimension = typeof body.dimensions === 'number' ? body.dimensions : 1536;
  const data = inputs.map((text, index) => {
    const vector = new Float32Array(dimension);
    for (let i = 0; i < text.length; i++) vector[(text.charCodeAt(i) * 31 + i) % dimension]! += 1;
    const norm = Math.hypot(...vector) || 1;
    for (let i = 0; i < dimension; i++) vector[i]! /= norm;
    const embedding = body.encoding_format === 'base64' ? Buffer.from(vector.buffer).toString('base64') : Array.from(vector);
    return { object: 'embedding', index, embedding };
  });
  const tokens = inputs.reduce((n, t) => n + Math.ceil(t.length / 4), 0);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } }));
}

function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  param: string | null = null,
  code: string | undefined = undefined,
  headers: Readonly<Record<string, string>> = {},
): void {
  const type = status === 429 ? 'rate_limit_error' : status >= 500 ? 'server_error' : 'invalid_request_error';
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ error: { message, type, param, code: code ?? null } }));
}

function lastUserText(body: Record<string, unknown>): string {
  const input = body.input;
  if (typeof input === 'string') return input;
  const messages = (input as { type?: string; role?: string; content?: unknown }[]).filter((i) => i.role === 'user');
  const content = messages[messages.length - 1]?.content;
  return typeof content === 'string' ? content : '';
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`));
  });
}
