import { EntitySchema } from 'typeorm';
import { columnTypes, type Dialect } from '../persistence/dialect';

/** A session made by forkAgentSession: where it came from, and the usage its copied turns were charged elsewhere. */
export interface SessionForkRow {
  sessionId: string;
  orgId: string;
  sourceSessionId: string;
  sourceTurnId: string;
  createdDate: Date;
  inheritedInputTokens: number;
  inheritedOutputTokens: number;
  inheritedCachedInputTokens: number;
  inheritedCostUsd: number | null;
  inheritedUsageEstimated: boolean;
}

/** A turn copied into a fork: the turn it is a copy of (its usage was charged there). */
export interface TurnCopyRow {
  turnId: string;
  orgId: string;
  sessionId: string;
  sourceSessionId: string;
  sourceTurnId: string;
}

/** Fork lineage, beside the sessions and turns it describes (written by session-forks.ts only). */
export function forkEntities(dialect: Dialect) {
  const t = columnTypes(dialect);
  const id = (length: number) => ({ type: 'varchar' as const, length, nullable: false, ...t.exactId });
  const bigint = (name: string) => ({ type: 'bigint' as const, name, default: 0 });

  const sessionForks = new EntitySchema<SessionForkRow>({
    name: 'AgentSessionFork',
    tableName: 'agent_session_forks',
    columns: {
      sessionId: { ...id(36), name: 'session_id', primary: true },
      orgId: { ...id(64), name: 'org_id' },
      sourceSessionId: { ...id(36), name: 'source_session_id' },
      sourceTurnId: { ...id(36), name: 'source_turn_id' },
      createdDate: { ...t.datetime, name: 'created_date' },
      inheritedInputTokens: bigint('inherited_input_tokens'),
      inheritedOutputTokens: bigint('inherited_output_tokens'),
      inheritedCachedInputTokens: bigint('inherited_cached_input_tokens'),
      inheritedCostUsd: { type: t.double, name: 'inherited_cost_usd', nullable: true },
      inheritedUsageEstimated: { type: 'boolean', name: 'inherited_usage_estimated', default: false },
    },
    indices: [{ name: 'idx_session_forks_source', columns: ['orgId', 'sourceSessionId', 'createdDate', 'sessionId'] }],
  });

  const turnCopies = new EntitySchema<TurnCopyRow>({
    name: 'AgentSessionTurnCopy',
    tableName: 'agent_session_turn_copies',
    columns: {
      turnId: { ...id(36), name: 'turn_id', primary: true },
      orgId: { ...id(64), name: 'org_id' },
      sessionId: { ...id(36), name: 'session_id' },
      sourceSessionId: { ...id(36), name: 'source_session_id' },
      sourceTurnId: { ...id(36), name: 'source_turn_id' },
    },
  });

  return { sessionForks, turnCopies };
}

export type ForkEntities = ReturnType<typeof forkEntities>;
