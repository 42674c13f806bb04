import { DomainError } from './errors';
import { summarize } from './text';
import { MAX_RECORDED_ARGUMENTS, type ToolCallEvent, type ToolCallOrigin, type ToolCallRecord } from './tool-call-record';
import type { ToolCall, ToolResult } from './turn';

export function startedCall(call: ToolCall, origin: ToolCallOrigin, clientRound?: number): ToolCallRecord {
  return {
    id: call.toolCallId,
    name: call.name,
    origin,
    argumentsJson: summarize(call.argumentsJson, MAX_RECORDED_ARGUMENTS),
    resultSummary: null,
    executionMs: null,
    status: origin === 'SERVER' ? 'RUNNING' : 'WAITING_FOR_CLIENT',
    ...(origin === 'CLIENT' && clientRound !== undefined ? { clientRound } : {}),
  };
}

/** How many times the turn has asked the client for tools (every pause for client tools is one round). */
export function clientToolRounds(records: readonly ToolCallRecord[]): number {
  let rounds = 0;
  for (const r of records) if (r.origin === 'CLIENT') rounds = Math.max(rounds, r.clientRound ?? 1);
  return rounds;
}

/**
 * MAX_CLIENT_TOOL_ROUNDS (issue 36): a turn whose model asks the client for tools once more
 * than the cap fails instead of pausing again, so one turn cannot run provider rounds (and
 * spend tokens) without end. `responseId` is the provider response that asked.
 */
export class ClientToolRoundsExceeded extends DomainError {
  constructor(
    readonly limit: number,
    readonly responseId: string | null,
  ) {
    super(
      'TOO_MANY_TOOL_ROUNDS',
      `the model asked the client for tools more than MAX_CLIENT_TOOL_ROUNDS (${limit}) times in one turn, so the turn failed; send a new instruction to go on`,
      { limit },
    );
    this.name = 'ClientToolRoundsExceeded';
  }
}

/** Refuses a pause for client tools beyond the cap: `records` hold the turn's calls, the ones asked for now included. */
export function assertClientToolRounds(records: readonly ToolCallRecord[], limit: number, responseId: string | null): void {
  if (clientToolRounds(records) > limit) throw new ClientToolRoundsExceeded(limit, responseId);
}

/** The call once its result is known (from a server tool or from the client). */
export function finishedCall(record: ToolCallRecord, result: ToolResult): ToolCallRecord {
  const failed = result.outcome.kind === 'error';
  const text = result.outcome.kind === 'error' ? result.outcome.errorMessage : result.outcome.resultJson;
  return { ...record, resultSummary: summarize(text), executionMs: result.executionMs, status: failed ? 'FAILED' : 'COMPLETED' };
}

/** Records the client's results on the calls the turn waited on. */
export function answerClientCalls(records: readonly ToolCallRecord[], results: readonly ToolResult[]): ToolCallRecord[] {
  const byId = new Map(results.map((r) => [r.toolCallId, r]));
  return records.map((r) => {
    const result = r.status === 'WAITING_FOR_CLIENT' ? byId.get(r.id) : undefined;
    return result ? finishedCall(r, result) : r;
  });
}

/** Server outputs kept for the continuation, in call order, each sent once. */
export function takePendingOutputs(records: readonly ToolCallRecord[]): { outputs: { callId: string; output: string }[]; records: ToolCallRecord[] } {
  const outputs = records.flatMap((r) => (r.pendingOutput != null ? [{ callId: r.id, output: r.pendingOutput }] : []));
  return { outputs, records: records.map(({ pendingOutput: _sent, ...r }) => r) };
}

/** A turn that ends closes what is still open: those calls never got a result. */
export function closeOpenCalls(records: readonly ToolCallRecord[]): ToolCallRecord[] {
  return records.map(({ pendingOutput: _unsent, ...r }) =>
    r.status === 'RUNNING' || r.status === 'WAITING_FOR_CLIENT' ? { ...r, status: 'ABANDONED' } : r,
  );
}

/** What subscribers see of a record. */
export function toolCallEvent(record: ToolCallRecord): ToolCallEvent {
  const { pendingOutput: _internal, clientRound: _counted, ...event } = record;
  return event;
}
