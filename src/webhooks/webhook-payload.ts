import type { EntityHeader } from '../domain/caller';
import type { SessionRecord } from '../domain/session';
import type { TurnRecord } from '../domain/turn';
import type { TurnStatus } from '../domain/turn-status';
import type { TurnUsage } from '../domain/usage';
import type { WebhookEventType } from './webhook-rules';

/**
 * The JSON body of a delivery (Standard Webhooks' `type`, `timestamp`, `data`). `data` names its
 * fields as the GraphQL types do (AgentSessionTurn, TurnUsage, AgentSession) and carries the
 * summaries and the URLs of the full texts and provider payloads, never those themselves.
 */
export interface WebhookBody {
  readonly type: WebhookEventType;
  /** When the change happened (ISO 8601, UTC). */
  readonly timestamp: string;
  readonly data: WebhookTurnData | WebhookSessionData;
}

interface WebhookDataBase {
  readonly orgId: string;
  readonly sessionId: string;
}

export interface WebhookTurnData extends WebhookDataBase {
  readonly turnId: string;
  readonly status: TurnStatus;
  readonly turn: WebhookTurn;
}

export interface WebhookSessionData extends WebhookDataBase {
  readonly turnId: null;
  readonly status: null;
  readonly session: WebhookSession;
}

export interface WebhookTurn {
  readonly id: string;
  readonly sessionId: string;
  readonly sequenceNumber: number;
  readonly status: TurnStatus;
  readonly statusTimeStamp: string;
  readonly createdByUser: EntityHeader;
  readonly mode: string;
  readonly openAIModel: string | null;
  readonly answeredByModel: string | null;
  readonly instructionSummary: string;
  readonly agentAnswerSummary: string | null;
  readonly fullInstructionUrl: string | null;
  readonly fullAgentAnswerUrl: string | null;
  readonly openAIRequestPayloadUrl: string | null;
  readonly openAIResponsePayloadUrl: string | null;
  readonly usage: WebhookUsage | null;
  readonly warnings: readonly string[];
  readonly errors: readonly string[];
  /** The client tools a TURN_AWAITING_TOOL_RESULTS turn waits on (their arguments are in the provider payload). */
  readonly pendingToolCalls: readonly { readonly toolCallId: string; readonly name: string }[];
  readonly files: readonly { readonly name: string; readonly url: string; readonly contentHash: string; readonly sizeBytes: number }[];
}

export interface WebhookUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
  readonly cachedInputTokens: number;
  readonly estimatedCostUsd: number | null;
  readonly isEstimated: boolean;
}

export interface WebhookSession {
  readonly id: string;
  readonly name: string;
  readonly ownerUser: EntityHeader;
  readonly agentContextId: string;
  readonly conversationContextId: string | null;
  readonly creationDate: string;
  /** Set for a session made by forkAgentSession. */
  readonly forkedFrom: { readonly sessionId: string; readonly turnId: string } | null;
}

/** Gateway paths (`/blobs/...`) made absolute with GATEWAY_PUBLIC_URL when it is set. */
export type UrlOf = (path: string | null) => string | null;

export const urlMaker =
  (publicUrl: string | null): UrlOf =>
  (path) =>
    path === null || publicUrl === null ? path : new URL(path, publicUrl).href;

export function turnBody(type: WebhookEventType, turn: TurnRecord, at: Date, url: UrlOf): WebhookBody {
  return {
    type,
    timestamp: at.toISOString(),
    data: {
      orgId: turn.orgId,
      sessionId: turn.sessionId,
      turnId: turn.id,
      status: turn.status,
      turn: {
        id: turn.id,
        sessionId: turn.sessionId,
        sequenceNumber: turn.sequenceNumber,
        status: turn.status,
        statusTimeStamp: turn.statusTimeStamp.toISOString(),
        createdByUser: turn.createdByUser,
        mode: turn.mode,
        openAIModel: turn.openAIModel,
        answeredByModel: turn.answeredByModel,
        instructionSummary: turn.instructionSummary,
        agentAnswerSummary: turn.agentAnswerSummary,
        fullInstructionUrl: url(turn.fullInstructionUrl),
        fullAgentAnswerUrl: url(turn.fullAgentAnswerUrl),
        openAIRequestPayloadUrl: url(turn.openAIRequestPayloadUrl),
        openAIResponsePayloadUrl: url(turn.openAIResponsePayloadUrl),
        usage: turn.usage ? usageOf(turn.usage) : null,
        warnings: turn.warnings,
        errors: turn.errors,
        pendingToolCalls: turn.pendingToolCalls.map(({ toolCallId, name }) => ({ toolCallId, name })),
        files: turn.files.map((f) => ({ name: f.name, url: url(f.url) ?? f.url, contentHash: f.contentHash, sizeBytes: f.sizeBytes })),
      },
    },
  };
}

export function sessionBody(
  session: Pick<SessionRecord, 'id' | 'name' | 'ownerUser' | 'ownerOrganization' | 'agentContextId' | 'conversationContextId' | 'creationDate'>,
  forkedFrom: WebhookSession['forkedFrom'],
): WebhookBody {
  return {
    type: 'SESSION_CREATED',
    timestamp: session.creationDate.toISOString(),
    data: {
      orgId: session.ownerOrganization.id,
      sessionId: session.id,
      turnId: null,
      status: null,
      session: {
        id: session.id,
        name: session.name,
        ownerUser: session.ownerUser,
        agentContextId: session.agentContextId,
        conversationContextId: session.conversationContextId,
        creationDate: session.creationDate.toISOString(),
        forkedFrom,
      },
    },
  };
}

const usageOf = (u: TurnUsage): WebhookUsage => ({
  inputTokens: u.inputTokens,
  outputTokens: u.outputTokens,
  totalTokens: u.totalTokens,
  cachedInputTokens: u.cachedInputTokens ?? 0,
  estimatedCostUsd: u.estimatedCostUsd,
  isEstimated: u.isEstimated,
});
