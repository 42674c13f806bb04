import { badInput, DomainError } from './errors';
import type { ToolCall, ToolResult } from './turn';

/** A tool result as a client sent it (AGN-033 5.2), before it is checked. */
export interface ToolResultSubmission {
  readonly toolCallId: string;
  readonly executionMs: number;
  readonly resultJson: string | null;
  readonly errorMessage: string | null;
}

const MAX_RESULT_CHARS = 1_000_000;
const MAX_ERROR_CHARS = 10_000;

/**
 * The longest a client tool may have run: the longest a continuation may wait for its
 * results (TOOL_RESULT_TIMEOUT_SECONDS is at most 7 days). It also keeps the value within
 * GraphQL's Int, which ToolResult.executionMs is.
 */
export const MAX_EXECUTION_MS = 7 * 24 * 3600 * 1000;

/** `executionMs` of a submitted tool result, as any transport delivers it. */
export function parseExecutionMs(value: unknown, at = 'executionMs'): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_EXECUTION_MS) {
    throw badInput(`${at} must be an integer between 0 and ${MAX_EXECUTION_MS} (milliseconds)`, { field: 'toolResults.executionMs' });
  }
  return value;
}

const mismatch = (message: string, details: Record<string, string | number> = {}) =>
  new DomainError('TOOL_RESULTS_MISMATCH', message, details);

/**
 * AGN-033 3.3: the results must answer the pending calls exactly (count, ids, order), each
 * with exactly one of resultJson or errorMessage. Anything else is a client bug and aborts
 * processing before anything changes.
 */
export function matchToolResults(pending: readonly ToolCall[], submitted: readonly ToolResultSubmission[]): ToolResult[] {
  if (submitted.length !== pending.length) {
    throw mismatch(`expected ${pending.length} tool result(s), got ${submitted.length}`, {
      expected: pending.length,
      received: submitted.length,
    });
  }
  return pending.map((call, i) => {
    const result = submitted[i] as ToolResultSubmission;
    if (result.toolCallId !== call.toolCallId) {
      throw mismatch(`tool result ${i + 1} answers ${result.toolCallId.slice(0, 100)}, expected ${call.toolCallId}`, {
        position: i + 1,
        expectedToolCallId: call.toolCallId,
      });
    }
    const executionMs = parseExecutionMs(result.executionMs, `executionMs of ${call.toolCallId}`);
    return { toolCallId: call.toolCallId, executionMs, outcome: outcomeOf(call, result) };
  });
}

function outcomeOf(call: ToolCall, result: ToolResultSubmission): ToolResult['outcome'] {
  const hasResult = result.resultJson !== null;
  const hasError = result.errorMessage !== null;
  if (hasResult === hasError) {
    throw mismatch(`tool result for ${call.toolCallId} must carry exactly one of resultJson or errorMessage`);
  }
  if (hasError) {
    const errorMessage = result.errorMessage;
    if (errorMessage.length > MAX_ERROR_CHARS) throw mismatch(`errorMessage of ${call.toolCallId} is too long`);
    return { kind: 'error', errorMessage };
  }
  const resultJson = result.resultJson as string;
  if (resultJson.length > MAX_RESULT_CHARS) throw mismatch(`resultJson of ${call.toolCallId} is too large`);
  try {
    JSON.parse(resultJson);
  } catch {
    throw mismatch(`resultJson of ${call.toolCallId} is not valid JSON`);
  }
  return { kind: 'result', resultJson };
}

/** What the provider receives as the function_call_output of one result. */
export const toolOutputText = (result: ToolResult): string =>
  result.outcome.kind === 'result' ? result.outcome.resultJson : JSON.stringify({ error: result.outcome.errorMessage });
