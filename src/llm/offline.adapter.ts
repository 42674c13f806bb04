import { randomUUID } from 'node:crypto';
import { setImmediate as nextTick } from 'node:timers/promises';
import { LlmError, type LanguageModel, type LlmCallOptions, type LlmRequest, type LlmResponse } from './llm.port';

const OFFLINE_MODEL = 'offline';
const PIECE = 64;
const ECHO = 2000;

/**
 * The embedded default when no OPENAI_API_KEY is set: a deterministic, clearly labelled
 * answer built from what the model would have received (instruction, files, snippets),
 * streamed in pieces, so the whole pipeline runs with no network. It reports no usage,
 * so turns carry estimated token counts.
 */
export class OfflineLanguageModel implements LanguageModel {
  modelFor(_requested: string): string {
    return OFFLINE_MODEL;
  }

  payloadOf(request: LlmRequest): Record<string, unknown> {
    return {
      adapter: OFFLINE_MODEL,
      model: request.model,
      instructions: request.instructions,
      previous_response_id: request.previousResponseId,
      input: request.input,
      tools: request.tools.map((t) => t.name),
    };
  }

  async respond(request: LlmRequest, options: LlmCallOptions): Promise<LlmResponse> {
    const text = offlineAnswer(request);
    for (let i = 0; i < text.length; i += PIECE) {
      // Yield between pieces, as a real stream does, so cancellation and subscribers interleave.
      await nextTick();
      if (options.signal.aborted) throw new LlmError('aborted', 'the model call was aborted');
      options.onTextDelta(text.slice(i, i + PIECE));
    }
    const responseId = `offline_${randomUUID()}`;
    return { responseId, model: OFFLINE_MODEL, text, toolCalls: [], usage: null, raw: { id: responseId, offline: true, output_text: text } };
  }
}

function offlineAnswer(request: LlmRequest): string {
  const last = [...request.input].reverse().find((item) => item.type === 'message' && item.role === 'user');
  const received = last?.type === 'message' ? last.text : '';
  const shown = received.length > ECHO ? `${received.slice(0, ECHO)}\n…` : received;
  const more = received.length > ECHO ? ` (first ${ECHO} of ${received.length} characters shown)` : '';
  return [
    '> **Offline answer.** No language model is configured (`OPENAI_API_KEY` is not set), so the gateway',
    '> answered locally and deterministically. Nothing below was written by a model.',
    '',
    `Model requested: \`${request.model}\` · continues an earlier response: ${request.previousResponseId ? 'yes' : 'no'} · ` +
      `earlier messages preloaded: ${Math.max(0, request.input.length - 1)}`,
    '',
    `What the model would have received for this turn${more}:`,
    '',
    '~~~~text',
    shown.replace(/~~~~/g, '~~~\u200b~'),
    '~~~~',
  ].join('\n');
}
