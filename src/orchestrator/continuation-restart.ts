import type { BlobStore } from '../blobs/blob-store.port';
import { TURN_BLOBS } from '../domain/blob-keys';
import type { OrgScope } from '../domain/caller';
import { restartWarning } from '../domain/chain-restart';
import type { ConversationContextRecord } from '../domain/contexts';
import type { SessionRecord } from '../domain/session';
import type { TurnRecord } from '../domain/turn';
import type { LlmInputItem, LlmToolCallItem, LlmToolOutput } from '../llm/llm.port';
import type { TurnStore } from '../sessions/session-store.port';
import { preloadChain } from './chain-preload';
import { HISTORY_WINDOW, type PlannedChainRestart } from './instruction-planner';
import { llmRequestOf, userMessage } from './packaging';
import { TurnBlobs } from './turn-blobs';

export interface ContinuationRestartInputs {
  readonly scope: OrgScope;
  readonly session: SessionRecord;
  readonly turn: TurnRecord;
  readonly conversation: ConversationContextRecord | null;
  readonly model: string;
  /** The outputs the round sends, each answering a call of the turn. */
  readonly outputs: readonly LlmToolOutput[];
  readonly chainTtlSeconds: number;
}

/**
 * Issue 10: the provider lost the chain a tool continuation answers. A new chain cannot point
 * at the calls, so it carries them itself: the preloaded history, the turn's own instruction
 * and active files, the model's calls, then their outputs (the Responses API takes
 * function_call items as input for exactly this). The snippets of the first request are not
 * repeated: the model already acted on them when it chose its calls.
 */
export async function restartContinuation(
  deps: { readonly blobs: BlobStore; readonly sessions: Pick<TurnStore, 'recentTurns'> },
  inputs: ContinuationRestartInputs,
): Promise<PlannedChainRestart> {
  const { scope, session, turn } = inputs;
  const earlier = (await deps.sessions.recentTurns(scope, session, HISTORY_WINDOW)).filter((t) => t.sequenceNumber < turn.sequenceNumber);
  const blobScope = { orgId: scope.orgId, sessionId: session.id };
  // The turn itself last, so the preload carries its active files at the versions it was sent.
  const preload = await preloadChain(deps.blobs, blobScope, [...earlier, turn], new Set());
  const instruction = await new TurnBlobs(deps.blobs, scope.orgId, session.id, turn.id).getText(TURN_BLOBS.instruction);
  const input: LlmInputItem[] = [
    ...preload.messages,
    userMessage({ instruction: instruction ?? turn.instructionSummary, mode: turn.mode, filesToSend: preload.files, filesNotSent: [], snippets: [] }),
    ...inputs.outputs.flatMap((o) => callAnswered(turn, o.callId)),
    ...inputs.outputs,
  ];
  const warning = restartWarning('LOST_BY_PROVIDER');
  return {
    request: llmRequestOf(inputs.conversation, { model: inputs.model, previousResponseId: null, input }),
    activeFileRefs: turn.activeFileRefs,
    chunkRefs: turn.chunkRefs,
    requestMetadata: turn.requestMetadata,
    warnings: [warning, preload.warning].filter((w): w is string => w !== null),
    chainExpiry: (receivedAt) => new Date(receivedAt.getTime() + inputs.chainTtlSeconds * 1000),
  };
}

/** The call an output answers, as the model made it: a client call waiting on the turn, else a recorded server call. */
function callAnswered(turn: TurnRecord, callId: string): LlmToolCallItem[] {
  const pending = turn.pendingToolCalls.find((c) => c.toolCallId === callId);
  const call = pending
    ? { name: pending.name, argumentsJson: pending.argumentsJson }
    : turn.toolCalls.find((r) => r.id === callId);
  return call ? [{ type: 'function_call', callId, name: call.name, arguments: call.argumentsJson }] : [];
}
