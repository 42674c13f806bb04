import OpenAI, { APIConnectionError, APIError } from 'openai';
import type { ResponseCreateParamsStreaming, ResponseInputItem } from 'openai/resources/responses/responses';
import { LlmError, type LanguageModel, type LlmCallOptions, type LlmInputItem, type LlmRequest, type LlmResponse } from './llm.port';
import { ResponsesStreamCollector, clip } from './responses-stream';
import { askedRetryDelayMs, isRetriedStatus, retryBoundFetch, type RetryBounds } from './retry-bounds';

export interface OpenAIResponsesOptions {
  readonly apiKey: string;
  /** Unset means OpenAI itself; set for a compatible endpoint (or the test suite's stand-in). */
  readonly baseURL: string | null;
  /** The OpenAI-Organization and OpenAI-Project headers, when set. */
  readonly organization?: string | null;
  readonly project?: string | null;
  /** Deadline of one provider call, its retries and its stream included (LLM_TIMEOUT_MS). */
  readonly timeoutMs: number;
  readonly retry: RetryBounds;
  /** Told of every attempt made again after a retryable failure (metrics). */
  readonly onRetry?: () => void;
}

/**
 * The OpenAI Responses API through the openai SDK, streamed. The SDK retries 408/409/429/5xx
 * and connection failures, only before a response began (so never once answer text went out),
 * honouring retry-after; retry-bounds.ts refuses the asks longer than LLM_RETRY_MAX_DELAY_MS.
 */
export class OpenAIResponsesAdapter implements LanguageModel {
  private readonly client: OpenAI;

  constructor(private readonly options: OpenAIResponsesOptions) {
    this.client = new OpenAI({
      apiKey: options.apiKey,
      ...(options.baseURL ? { baseURL: options.baseURL } : {}),
      // Given explicitly (null when unset): config.ts is the one reader of the environment.
      organization: options.organization ?? null,
      project: options.project ?? null,
      maxRetries: options.retry.maxRetries,
      // The SDK's timeout ends only the wait for response headers, and is retried. The adapter's
      // own deadline (respond) covers retries and stream; set earlier, at the same length, it
      // fires first, so a timeout is final. The SDK's is given so its 10-minute default never
      // cuts a longer LLM_TIMEOUT_MS short.
      timeout: options.timeoutMs,
      fetch: retryBoundFetch(options.retry.maxDelayMs, options.onRetry),
    });
  }

  modelFor(requested: string): string {
    return requested;
  }

  payloadOf(request: LlmRequest): Record<string, unknown> {
    return { ...this.bodyOf(request) };
  }

  async respond(request: LlmRequest, options: LlmCallOptions): Promise<LlmResponse> {
    // One signal per call: the SDK leaves a listener on the signal it is given, and a timer
    // shares it to end the whole call (the SDK's timeout stops once the headers arrived).
    const call = new AbortController();
    let ended: 'timeout' | 'aborted' | null = null;
    const end = (why: 'timeout' | 'aborted') => {
      ended ??= why;
      call.abort();
    };
    const timer = setTimeout(() => end('timeout'), this.options.timeoutMs);
    const onAbort = () => end('aborted');
    if (options.signal.aborted) onAbort();
    else options.signal.addEventListener('abort', onAbort, { once: true });
    const collector = new ResponsesStreamCollector(options.onTextDelta);
    let failure: unknown = null;
    try {
      const stream = await untilAborted(this.client.responses.create(this.bodyOf(request), { signal: call.signal }), call.signal);
      // On abort the SDK ends the iteration quietly (and closes the connection): `ended` says why.
      for await (const event of stream) collector.accept(event);
      if (!ended) return collector.result();
    } catch (e) {
      failure = e;
    } finally {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
    }
    throw this.failureOf(failure, ended, collector);
  }

  private bodyOf(request: LlmRequest): ResponseCreateParamsStreaming {
    return {
      model: request.model,
      ...(request.instructions ? { instructions: request.instructions } : {}),
      input: request.input.map(inputItemOf),
      ...(request.previousResponseId ? { previous_response_id: request.previousResponseId } : {}),
      ...(request.tools.length > 0
        ? {
            tools: request.tools.map((tool) => ({
              type: 'function' as const,
              name: tool.name,
              ...(tool.description ? { description: tool.description } : {}),
              parameters: JSON.parse(tool.parametersJson) as Record<string, unknown>,
              strict: false,
            })),
          }
        : {}),
      ...(request.temperature !== null ? { temperature: request.temperature } : {}),
      // Chaining with previous_response_id needs the provider to keep the response.
      store: true,
      stream: true,
    };
  }

  private failureOf(e: unknown, ended: 'timeout' | 'aborted' | null, collector: ResponsesStreamCollector): LlmError {
    if (ended === 'timeout') return new LlmError('timeout', `the model did not finish answering within ${this.options.timeoutMs} ms`);
    if (ended === 'aborted') return new LlmError('aborted', 'the model call was aborted');
    if (e instanceof LlmError) return e;
    if (e instanceof APIConnectionError) {
      return new LlmError('failed', `could not reach the model provider; no recovery after ${this.options.retry.maxRetries} retries`);
    }
    if (e instanceof APIError) {
      const failure = e as APIError;
      // An error object in the stream carries no status: the provider failed mid-answer.
      if (failure.status === undefined) return collector.streamError(providerMessageOf(failure) || 'no reason given', failure.error);
      return this.httpFailure(failure.status, failure);
    }
    // The body broke off (the SDK rethrows the socket's error) or was not server-sent events.
    return new LlmError('failed', 'the connection to the model provider broke while streaming');
  }

  private httpFailure(status: number, e: APIError): LlmError {
    const said = providerMessageOf(e);
    if (status === 429 || status >= 500) {
      const what = status === 429 ? 'the model provider is rate limiting requests (HTTP 429)' : `the model provider failed (HTTP ${status})`;
      return new LlmError('failed', `${what}; ${this.whyNotRetried(e.headers)}`);
    }
    if (e.code === 'previous_response_not_found' || /previous response/i.test(said)) {
      return new LlmError('chain_lost', `the model provider no longer knows the previous response (HTTP ${status})`);
    }
    if (status === 401 || status === 403) {
      // The provider's text may quote part of the key: never pass it on.
      return new LlmError('failed', `the model provider refused the gateway's credentials (HTTP ${status}); check OPENAI_API_KEY`);
    }
    const retried = isRetriedStatus(status) ? `; ${this.whyNotRetried(e.headers)}` : '';
    return new LlmError('failed', `the model provider rejected the request (HTTP ${status}): ${clip(said || 'no reason given')}${retried}`);
  }

  /** Why the SDK stopped retrying a status it retries. */
  private whyNotRetried(headers: Headers | undefined): string {
    const asked = headers ? askedRetryDelayMs(headers) : null;
    if (asked !== null && asked > this.options.retry.maxDelayMs) {
      return `the provider asked to wait ${Math.ceil(asked / 1000)} s, longer than the gateway waits`;
    }
    return `no recovery after ${this.options.retry.maxRetries} retries`;
  }
}

/**
 * Settles with `work`, or rejects as soon as `signal` aborts: the SDK sleeps between retries
 * on a timer no signal cuts short, and a cancelled turn must not wait it out.
 */
function untilAborted<T>(work: PromiseLike<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error('the model call was aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/** What the provider's error body said (`{"error": {"message"}}`), without the SDK's status prefix. */
function providerMessageOf(e: APIError): string {
  const body: { message?: unknown } | undefined = e.error;
  const message = body?.message;
  return typeof message === 'string' ? message : '';
}

function inputItemOf(item: LlmInputItem): ResponseInputItem {
  switch (item.type) {
    case 'message':
      return { type: 'message', role: item.role, content: item.text };
    case 'function_call':
      return { type: 'function_call', call_id: item.callId, name: item.name, arguments: item.arguments };
    case 'function_call_output':
      return { type: 'function_call_output', call_id: item.callId, output: item.output };
  }
}
