import type { ToolCallRecord } from '../../domain/tool-call-record';
import { clientToolRounds } from '../../domain/tool-calls';
import { toolOutputText } from '../../domain/tool-results';
import { LlmError, type LanguageModel, type LlmRequest, type LlmResponse } from '../../llm/llm.port';
import type { InFlightTurn } from '../in-flight';
import type { TurnBlobs } from '../turn-blobs';
import type { TurnTally } from '../turn-tally';
import type { ServerToolContext } from './server-tool';
import type { ServerToolbox } from './toolbox';

export interface ToolLoopDeps {
  readonly llm: LanguageModel;
  readonly toolbox: ServerToolbox;
  /** MAX_SERVER_TOOL_ROUNDS: provider rounds whose server tool calls are run, per run of a turn. */
  readonly maxRounds: number;
}

/** One run of a turn as the loop sees it. */
export interface LoopRun {
  readonly request: LlmRequest;
  /** A continuation: the payload logs carry on from earlier rounds. */
  readonly continued: boolean;
  readonly tool: ServerToolContext;
  /** Client calls whose results this run brings, published before the first round. */
  readonly answered: readonly ToolCallRecord[];
  readonly onTextDelta: (text: string) => void;
  /** Publishes a tool call as it starts and as it ends (the live audit trail). */
  readonly onToolCall: (record: ToolCallRecord) => void;
  /** The first round failed: the request to send instead (a restarted chain), or null to give up. */
  readonly recover: (e: unknown) => Promise<LlmRequest | null>;
}

/**
 * Provider rounds until the model answers or asks the client for tools. Server tools are
 * offered next to the client's; the calls the model makes to them run here, and their
 * outputs go back as function_call_output items on the response that asked. After
 * `maxRounds` such rounds the server tools are withdrawn, so the model has to answer. What
 * is returned is the last response, its text being all text of the run, its tool calls the
 * client's only (server outputs for that same response wait in the tally).
 */
export class ServerToolLoop {
  constructor(private readonly deps: ToolLoopDeps) {}

  async respond(run: LoopRun, flight: InFlightTurn, blobs: TurnBlobs, tally: TurnTally): Promise<LlmResponse> {
    const clientTools = run.request.tools;
    const serverTools = this.deps.maxRounds > 0 ? this.deps.toolbox.offeredBeside(clientTools) : [];
    let request: LlmRequest = { ...run.request, tools: [...clientTools, ...serverTools] };
    let continued = run.continued;
    let text = '';
    for (const record of run.answered) run.onToolCall(record);
    for (let round = 1; ; round++) {
      const offered = new Set(request.tools.slice(clientTools.length).map((t) => t.name));
      // A cancel that arrived while server tools ran: no further round is sent (or counted).
      if (flight.controller.signal.aborted) throw new LlmError('aborted', 'the model call was aborted');
      tally.requestUrl = await blobs.appendRequest(this.deps.llm.payloadOf(request), continued);
      tally.roundStarted(request, flight.text);
      const call = (r: LlmRequest) => this.deps.llm.respond(r, { signal: flight.controller.signal, onTextDelta: run.onTextDelta });
      let result: LlmResponse;
      try {
        result = await call(request);
      } catch (e) {
        const restarted = round === 1 ? await run.recover(e) : null;
        if (!restarted) throw e;
        // The provider refused the lost chain outright; the retry on the new one is the round.
        tally.roundRefused();
        request = { ...restarted, tools: request.tools };
        continued = true;
        tally.requestUrl = await blobs.appendRequest(this.deps.llm.payloadOf(request), continued);
        tally.roundStarted(request, flight.text);
        result = await call(request);
      }
      tally.roundAnswered(result);
      text += result.text;
      const serverCalls = result.toolCalls.filter((c) => offered.has(c.name));
      const outputs: { callId: string; output: string }[] = [];
      for (const call of serverCalls) {
        run.onToolCall(tally.callStarted(call, 'SERVER'));
        const { result: toolResult, file } = await this.deps.toolbox.run(call, run.tool);
        run.onToolCall(tally.callFinished(toolResult, file));
        outputs.push({ callId: call.toolCallId, output: toolOutputText(toolResult) });
      }
      const clientCalls = result.toolCalls.filter((c) => !offered.has(c.name));
      const done = serverCalls.length === 0 || clientCalls.length > 0;
      if (done && clientCalls.length > 0) {
        const clientRound = clientToolRounds(tally.records) + 1;
        for (const call of clientCalls) run.onToolCall(tally.callStarted(call, 'CLIENT', clientRound));
      }
      const logged = blobs.appendResponse({ streamedDeltas: tally.takeStreamed(flight.deltas), response: result.raw }, continued);
      continued = true;
      if (done) {
        // The runner awaits this write together with the answer's (one blob store transaction, not two).
        tally.logResponse(logged);
        tally.keepForContinuation(outputs);
        return { ...result, text, toolCalls: clientCalls };
      }
      tally.responseUrl = await logged;
      const withdraw = round >= this.deps.maxRounds;
      if (withdraw) {
        tally.warnings.push(`The model used all ${this.deps.maxRounds} server tool rounds; server tools were withdrawn for its answer.`);
      }
      request = {
        ...request,
        previousResponseId: result.responseId,
        input: outputs.map((o) => ({ type: 'function_call_output', callId: o.callId, output: o.output })),
        tools: withdraw ? clientTools : request.tools,
      };
    }
  }
}
