import type { EntityHeader } from './caller';
import type { TurnStatus } from './turn-status';
import type { TurnUsage } from './usage';

/** DD-002A: the durable thread, as the session store hands it out. */
export interface SessionRecord {
  readonly id: string;
  readonly name: string;
  readonly key: string | null;
  readonly description: string | null;
  readonly isPublic: boolean;
  readonly isDraft: boolean;
  readonly isDeleted: boolean;
  readonly category: string | null;
  readonly ownerOrganization: EntityHeader;
  readonly ownerUser: EntityHeader;
  readonly creationDate: Date;
  readonly lastUpdatedDate: Date;
  readonly agentContextId: string;
  readonly conversationContextId: string | null;
  readonly workspaceId: string | null;
  readonly repo: string | null;
  readonly defaultLanguage: string | null;
  readonly turnCount: number;
  readonly lastTurnStatus: TurnStatus | null;
  readonly lastTurnDate: Date | null;
  /** Sum over the session's turns; estimated if any turn's usage was. */
  readonly usage: TurnUsage;
}

export interface NewSession {
  /** Chosen by the caller when it must know the id before the session exists (its blobs are stored first). */
  readonly id?: string;
  readonly name: string;
  readonly agentContextId: string;
  readonly conversationContextId?: string | null;
  readonly key?: string | null;
  readonly description?: string | null;
  readonly category?: string | null;
  readonly isPublic?: boolean;
  readonly isDraft?: boolean;
  readonly workspaceId?: string | null;
  readonly repo?: string | null;
  readonly defaultLanguage?: string | null;
}

export interface SessionPatch {
  readonly name?: string | null;
  readonly description?: string | null;
  readonly isPublic?: boolean | null;
  readonly category?: string | null;
}

export const SESSION_ORDERS = ['LAST_UPDATED_DESC', 'LAST_UPDATED_ASC', 'CREATED_DESC', 'NAME_ASC'] as const;
export type SessionOrder = (typeof SESSION_ORDERS)[number];

/** Every AgentSessionFilter field of the contract, already parsed. */
export interface SessionFilter {
  readonly participantId?: string | null;
  readonly ownerUserId?: string | null;
  readonly agentContextId?: string | null;
  readonly conversationContextId?: string | null;
  readonly workspaceId?: string | null;
  readonly repo?: string | null;
  readonly lastTurnStatus?: TurnStatus | null;
  readonly updatedAfter?: Date | null;
  readonly updatedBefore?: Date | null;
  readonly search?: string | null;
  readonly includeDeleted?: boolean | null;
}
