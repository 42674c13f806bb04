import type { FileRef } from '../domain/file-ref';
import { addUsage, priceOf, usageOf, type PricingTable, type ReportedUsage } from '../domain/pricing';
import type { ToolCallRecord } from '../domain/tool-call-record';
import { finishedCall, startedCall } from '../domain/tool-calls';
import type { ToolCall, ToolResult, TurnWork } from '../domain/turn';
import type { TurnUsage } from '../domain/usage';
import type { LlmInputItem, LlmRequest, LlmResponse } from '../llm/llm.port';

/**
 * What one run of a turn has spent and produced so far, provider round by provider round:
 * usage (spec 003), tool calls (spec 004 section 7), written files, server tool results and
 * the answering model. However the run ends (answer, pause, failure, cancel), the turn
 * records what the tally holds, so tokens spent before a failure are counted.
 */
export class TurnTally {
  usage: TurnUsage | null;
  records: ToolCallRecord[];
  files: FileRef[];
  readonly serverResults: ToolResult[] = [];
  answeredByModel: string | null = null;
  requestUrl: string | null = null;
  responseUrl: string | null = null;
  readonly warnings: string[] = [];
  /** Output items (text and tool calls) of the turn's stream counted in its response log so far. */
  private loggedDeltas: number;
  /** The provider round under way, and how much answer text had streamed when it began. */
  private open: { request: LlmRequest; textBefore: number } | null = null;
  /** The last round's response log while it is being written (see logResponse). */
  private responseLog: Promise<void> | null = null;

  constructor(
    private readonly pricing: PricingTable,
    private readonly requestedModel: string,
    earlier: { readonly usage: TurnUsage | null; readonly toolCalls: readonly ToolCallRecord[]; readonly files: readonly FileRef[] },
    firstDeltaIndex: number,
  ) {
    this.loggedDeltas = firstDeltaIndex;
    this.usage = earlier.usage;
    this.records = [...earlier.toolCalls];
    this.files = [...earlier.files];
  }

  /** Output items since the last response log entry (a continuation's output index carries on after all of them). */
  takeStreamed(deltas: number): number {
    const streamed = deltas - this.loggedDeltas;
    this.loggedDeltas = deltas;
    return streamed;
  }

  roundStarted(request: LlmRequest, streamedSoFar: string): void {
    this.open = { request, textBefore: streamedSoFar.length };
  }

  /** The provider answered the open round: its usage as reported, else estimated. */
  roundAnswered(result: LlmResponse): void {
    this.answeredByModel = result.model;
    this.close(result.usage, result.text, result.toolCalls);
  }

  /**
   * The open round ended without an answer (failed, cancelled, timed out): the tokens the
   * provider reported for it, else ceil(chars / 4) of what was sent and what streamed back.
   */
  roundAbandoned(streamedSoFar: string, reported: ReportedUsage | null, model: string | null): void {
    if (!this.open) return;
    if (model) this.answeredByModel = model;
    this.close(reported, streamedSoFar.slice(this.open.textBefore), []);
  }

  /** The open round was refused before the provider did any work (a lost chain): nothing to count. */
  roundRefused(): void {
    this.open = null;
  }

  callStarted(call: ToolCall, origin: ToolCallRecord['origin'], clientRound?: number): ToolCallRecord {
    const record = startedCall(call, origin, clientRound);
    this.records.push(record);
    return record;
  }

  callFinished(result: ToolResult, file: FileRef | null): ToolCallRecord {
    const at = this.records.findIndex((r) => r.id === result.toolCallId);
    const record = finishedCall(this.records[at] as ToolCallRecord, result);
    this.records[at] = record;
    this.serverResults.push(result);
    if (file) {
      // Writing a path again replaces its earlier version in place.
      const same = this.files.findIndex((f) => f.name === file.name);
      if (same < 0) this.files.push(file);
      else this.files[same] = file;
    }
    return record;
  }

  /** The last round's response log is being written: `responseUrl` is set once it is stored (awaited by responseLogged). */
  logResponse(write: Promise<string>): void {
    const log = write.then((url) => {
      this.responseUrl = url;
    });
    // Whoever settles the turn awaits it; a failure there fails the turn, not the process.
    log.catch(() => undefined);
    this.responseLog = log;
  }

  /** Resolves once the response log handed to logResponse is stored; rejects if it could not be. */
  async responseLogged(): Promise<void> {
    await this.responseLog;
  }

  /** Server outputs that wait for the client's results (one response asked for both kinds). */
  keepForContinuation(outputs: readonly { readonly callId: string; readonly output: string }[]): void {
    const byId = new Map(outputs.map((o) => [o.callId, o.output]));
    this.records = this.records.map((r) => (byId.has(r.id) ? { ...r, pendingOutput: byId.get(r.id) ?? null } : r));
  }

  /** The turn fields this tally fills, for whichever way the turn ends or pauses. */
  work(): TurnWork & { readonly usage: TurnUsage | null } {
    return { toolCallRecords: this.records, files: this.files, answeredByModel: this.answeredByModel, usage: this.usage };
  }

  private close(reported: ReportedUsage | null, receivedText: string, calls: readonly ToolCall[]): void {
    const open = this.open;
    if (!open) return;
    this.open = null;
    const sent = [open.request.instructions ?? '', ...open.request.input.map(sentText)];
    const received = [receivedText, ...calls.map((c) => c.argumentsJson)];
    const text = (parts: string[]) => parts.filter((p) => p.length > 0).join('\n');
    const model = this.answeredByModel ?? this.requestedModel;
    const price = priceOf(this.pricing, model) ?? priceOf(this.pricing, this.requestedModel);
    this.usage = addUsage(this.usage, usageOf(reported, { inputText: text(sent), outputText: text(received) }, price));
  }
}

/** The characters an input item puts in front of the model (for the ceil(chars/4) estimate). */
function sentText(item: LlmInputItem): string {
  switch (item.type) {
    case 'message':
      return item.text;
    case 'function_call':
      return `${item.name}${item.arguments}`;
    case 'function_call_output':
      return item.output;
  }
}
