import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { LlmError, type LanguageModel, type LlmCallOptions, type LlmInputItem, type LlmRequest, type LlmResponse } from './llm.port';
import { ProviderConnectionError, ProviderHttpError, ProviderTimeout, SseJsonClient, type HeaderLookup } from './responses-client';
import { ResponsesStreamCollector, clip } from './responses-stream';
import { decideRetry, sleep, type RetryBounds } from './retry-policy';

export interface OpenAIResponsesOptions {
  readonly apiKey: string;
  /** Unset means OpenAI itself; set for a compatible endpoint (or the test suite's stand-in). */
  readonly baseURL: string | null;
  /** The OpenAI-Organization and OpenAI-Project headers, when set. */
  readonly organization?: string | null;
  readonly project?: string | null;
  /** Deadline of one provider call, stream included (LLM_TIMEOUT_MS). */
  readonly timeoutMs: number;
  readonly retry: RetryBounds;
  /** Told of every attempt made again after a retryable failure (metrics). */
  readonly onRetry?: () => void;
}

/** A failure of one attempt, with what the retry decision needs. */
class AttemptFailure extends Error {
  constructor(
    readonly error: LlmError,
    readonly retryable: boolean,
    readonly headers: HeaderLookup | null,
  ) {
    super(error.message);
  }
}

const OPENAI_API = 'https://api.openai.com/v1';

/**
 * The OpenAI Responses API, streamed (POST /responses with stream: true, read as server-sent
 * events by responses-client.ts). The gateway retries 429/5xx itself, only before any answer
 * text went out, and only as long as the provider's retry-after fits LLM_RETRY_MAX_DELAY_MS.
 */
export class OpenAIResponsesAdapter implements LanguageModel {
  private readonly client: SseJsonClient;

  constructor(private readonly options: OpenAIResponsesOptions) {
    const { organization, project } = options;
    this.client = new SseJsonClient({
      baseURL: options.baseURL ?? OPENAI_API,
      headers: {
        authorization: `Bearer ${options.apiKey}`,
        ...(organization ? { 'openai-organization': organization } : {}),
        ...(project ? { 'openai-project': project } : {}),
      },
    });
  }

  modelFor(requested: string): string {
    return requested;
  }

  payloadOf(request: LlmRequest): Record<string, unknown> {
    return {
      model: request.model,
      ...(request.instructions ? { instructions: request.instructions } : {}),
      input: request.input.map(inputItemOf),
      ...(request.previousResponseId ? { previous_response_id: request.previousResponseId } : {}),
      ...(request.tools.length > 0
        ? {
            tools: request.tools.map((tool) => ({
              type: 'function',
              name: tool.name,
              ...(tool.description ? { description: tool.description } : {}),
              parameters: JSON.parse(tool.parametersJson) as unknown,
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

  async respond(request: LlmRequest, options: LlmCallOptions): Promise<LlmResponse> {
    const payload = JSON.stringify(this.payloadOf(request));
    for (let attempt = 0; ; attempt++) {
      let streamed = false;
      const onTextDelta = (text: string) => {
        streamed = true;
        options.onTextDelta(text);
      };
      try {
        return await this.attempt(payload, options.signal, onTextDelta);
      } catch (e) {
        if (!(e instanceof AttemptFailure)) throw e;
        const failure = e;
        // Text already reached subscribers: a retry would stream a second, different answer.
        if (!failure.retryable || streamed) throw failure.error;
        const decision = decideRetry(attempt, failure.headers, this.options.retry);
        if (!decision.retry) throw new LlmError('failed', `${failure.error.message}; ${decision.reason}`, failure.error.provider);
        this.options.onRetry?.();
        try {
          await sleep(decision.delayMs, options.signal);
        } catch {
          throw new LlmError('aborted', 'the model call was aborted');
        }
      }
    }
  }

  private async attempt(payload: string, signal: AbortSignal, onTextDelta: (text: string) => void): Promise<LlmResponse> {
    const collector = new ResponsesStreamCollector(onTextDelta);
    try {
      await this.client.stream('responses', payload, { signal, timeoutMs: this.options.timeoutMs }, (data) => collector.accept(eventOf(data)));
      return collector.result();
    } catch (e) {
      throw this.classify(e, signal.aborted);
    }
  }

  private classify(e: unknown, aborted: boolean): AttemptFailure {
    const final = (error: LlmError) => new AttemptFailure(error, false, null);
    if (aborted) return final(new LlmError('aborted', 'the model call was aborted'));
    if (e instanceof ProviderTimeout) return final(new LlmError('timeout', `the model did not finish answering within ${this.options.timeoutMs} ms`));
    if (e instanceof LlmError) return final(e);
    if (e instanceof ProviderConnectionError) {
      // Before an answer began a retry is safe; a stream that broke mid-answer is not retried.
      return new AttemptFailure(new LlmError('failed', e.message), e.phase === 'connect', null);
    }
    if (e instanceof ProviderHttpError) return this.classifyHttp(e);
    return final(new LlmError('failed', 'the model call failed unexpectedly'));
  }

  private classifyHttp(e: ProviderHttpError): AttemptFailure {
    const { status, headers } = e;
    const said = e.providerMessage;
    if (status === 429) {
      return new AttemptFailure(new LlmError('failed', 'the model provider is rate limiting requests (HTTP 429)'), true, headers);
    }
    if (status >= 500) {
      return new AttemptFailure(new LlmError('failed', `the model provider failed (HTTP ${status})`), true, headers);
    }
    const final = (error: LlmError) => new AttemptFailure(error, false, headers);
    if (e.code === 'previous_response_not_found' || /previous response/i.test(said)) {
      return final(new LlmError('chain_lost', `the model provider no longer knows the previous response (HTTP ${status})`));
    }
    if (status === 401 || status === 403) {
      // The provider's text may quote part of the key: never pass it on.
      return final(new LlmError('failed', `the model provider refused the gateway's credentials (HTTP ${status}); check OPENAI_API_KEY`));
    }
    return final(new LlmError('failed', `the model provider rejected the request (HTTP ${status}): ${clip(said || 'no reason given')}`));
  }
}

/**
 * One streamed event. An event that carries an `error` object instead of a type (the API
 * reports some failures so) becomes the collector's error event.
 */
function eventOf(data: unknown): ResponseStreamEvent {
  const event = data as { type?: unknown; error?: { message?: unknown } | null };
  if (event && typeof event.type !== 'string' && event.error) {
    const message = typeof event.error.message === 'string' ? event.error.message : 'no reason given';
    return { type: 'error', code: null, message, param: null, sequence_number: 0 };
  }
  return data as ResponseStreamEvent;
}

function inputItemOf(item: LlmInputItem): Record<string, unknown> {
  switch (item.type) {
    case 'message':
      return { type: 'message', role: item.role, content: item.text };
    case 'function_call':
      return { type: 'function_call', call_id: item.callId, name: item.name, arguments: item.arguments };
    case 'function_call_output':
      return { type: 'function_call_output', call_id: item.callId, output: item.output };
  }
}
