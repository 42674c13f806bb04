import type { Response, ResponseStreamEvent } from 'openai/resources/responses/responses';
import type { ReportedUsage } from '../domain/pricing';
import type { ToolCall } from '../domain/turn';
import { LlmError, type LlmResponse } from './llm.port';

/**
 * Folds the Responses API's server-sent events into one answer: text deltas go out as they
 * arrive, function calls are collected when their item is done, and the terminal event
 * decides (completed, failed, incomplete, or an error event).
 */
export class ResponsesStreamCollector {
  private responseId: string | null = null;
  private text = '';
  private readonly calls: ToolCall[] = [];
  private final: Response | null = null;

  constructor(private readonly onTextDelta: (text: string) => void) {}

  accept(event: ResponseStreamEvent): void {
    switch (event.type) {
      case 'response.created':
        this.responseId = event.response.id;
        return;
      case 'response.output_text.delta':
        this.text += event.delta;
        this.onTextDelta(event.delta);
        return;
      case 'response.output_item.done':
        if (event.item.type === 'function_call') {
          this.calls.push({ toolCallId: event.item.call_id, name: event.item.name, argumentsJson: event.item.arguments });
        }
        return;
      case 'response.completed':
        this.final = event.response;
        return;
      case 'response.failed':
        throw new LlmError('failed', `the model provider failed the response: ${clip(event.response.error?.message ?? 'no reason given')}`, {
          responseId: event.response.id,
          raw: event.response,
          usage: usageOf(event.response),
          model: event.response.model,
        });
      case 'response.incomplete':
        throw new LlmError(
          'failed',
          `the model stopped before finishing its answer (${event.response.incomplete_details?.reason ?? 'no reason given'})`,
          { responseId: event.response.id, raw: event.response, usage: usageOf(event.response), model: event.response.model },
        );
      case 'error':
        throw this.streamError(event.message, event);
      default:
        return;
    }
  }

  /** The provider reported an error in the stream (an `error` event, or an event carrying an error object). */
  streamError(message: string, raw: unknown): LlmError {
    return new LlmError('failed', `the model provider reported an error while streaming: ${clip(message)}`, { responseId: this.responseId, raw });
  }

  result(): LlmResponse {
    const final = this.final;
    if (!final) {
      throw new LlmError('failed', 'the model provider closed the stream before the response completed', {
        responseId: this.responseId,
      });
    }
    return {
      responseId: final.id,
      model: final.model,
      text: this.text || outputTextOf(final),
      toolCalls: this.calls.length > 0 ? this.calls : functionCallsOf(final),
      usage: usageOf(final),
      raw: final,
    };
  }
}

/** Token counts as OpenAI reports them; cached input tokens are counted inside input tokens. */
function usageOf(response: Response): ReportedUsage | null {
  const usage = response.usage;
  if (!usage) return null;
  const cached = usage.input_tokens_details?.cached_tokens;
  return {
    inputTokens: usage.input_tokens,
    outputTokens: usage.output_tokens,
    cachedInputTokens: typeof cached === 'number' && cached > 0 ? cached : 0,
  };
}

function outputTextOf(response: Response): string {
  return response.output
    .flatMap((item) => (item.type === 'message' ? item.content : []))
    .map((part) => (part.type === 'output_text' ? part.text : ''))
    .join('');
}

function functionCallsOf(response: Response): ToolCall[] {
  return response.output.flatMap((item) =>
    item.type === 'function_call' ? [{ toolCallId: item.call_id, name: item.name, argumentsJson: item.arguments }] : [],
  );
}

/** Provider messages go into turn errors; keep them readable and bounded. */
export const clip = (text: string, max = 300): string => (text.length > max ? `${text.slice(0, max)}…` : text);
