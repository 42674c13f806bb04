import DataLoader from 'dataloader';
import type { Caller, EntityHeader } from '../domain/caller';
import type { AgentContextRecord, ConversationContextRecord } from '../domain/contexts';
import type { SessionRecord } from '../domain/session';
import type { ForkOrigin, SessionForkRecord } from '../domain/session-fork';
import type { TurnRecord } from '../domain/turn';
import type { TurnStatus } from '../domain/turn-status';
import { findNodes } from './node-lookup';
import type { Services } from './services';
import type { NodeValue } from './types/node.type';

export interface TurnWindowKey {
  readonly sessionId: string;
  readonly afterSequence: number;
  readonly limit: number;
  readonly status: TurnStatus | null;
}

/**
 * Batching loaders bound to ONE caller. A new set is made for every HTTP request and every
 * subscription event, so a cached row can never reach another caller or a later event, and
 * every batch is scoped by the caller's org (never by whatever the first key says). Each
 * loader is made when first asked for: most operations use none or a few (an execute none),
 * and a request in flight keeps its set until it answers.
 */
export class Loaders {
  private sessionLoader?: DataLoader<string, SessionRecord | null>;
  private agentContextLoader?: DataLoader<string, AgentContextRecord | null>;
  private conversationContextLoader?: DataLoader<string, ConversationContextRecord | null>;
  private turnLoader?: DataLoader<string, TurnRecord | null>;
  private lastTurnLoader?: DataLoader<Pick<SessionRecord, 'id' | 'turnCount'>, TurnRecord | null, string>;
  private participantsLoader?: DataLoader<string, EntityHeader[]>;
  private turnsLoader?: DataLoader<TurnWindowKey, TurnRecord[], string>;
  private turnCountByStatusLoader?: DataLoader<{ sessionId: string; status: TurnStatus }, number, string>;
  private forkOriginLoader?: DataLoader<string, SessionForkRecord | null>;
  private turnOriginLoader?: DataLoader<string, ForkOrigin | null>;
  private nodeLoader?: DataLoader<string, NodeValue | null>;

  constructor(
    private readonly caller: Caller,
    private readonly services: Services,
  ) {}

  get session(): DataLoader<string, SessionRecord | null> {
    return (this.sessionLoader ??= new DataLoader(async (ids) => byId(ids, await this.services.sessionBatches.sessionsByIds(this.caller, ids))));
  }

  get agentContext(): DataLoader<string, AgentContextRecord | null> {
    return (this.agentContextLoader ??= new DataLoader(async (ids) =>
      byId(ids, await this.services.contexts.agentContextsByIds(this.caller.orgId, ids)),
    ));
  }

  get conversationContext(): DataLoader<string, ConversationContextRecord | null> {
    return (this.conversationContextLoader ??= new DataLoader(async (ids) =>
      byId(ids, await this.services.contexts.conversationContextsByIds(this.caller.orgId, ids)),
    ));
  }

  get turn(): DataLoader<string, TurnRecord | null> {
    return (this.turnLoader ??= new DataLoader(async (ids) => byId(ids, await this.services.sessionBatches.turnsByIds(this.caller, ids))));
  }

  get lastTurn(): DataLoader<Pick<SessionRecord, 'id' | 'turnCount'>, TurnRecord | null, string> {
    return (this.lastTurnLoader ??= new DataLoader(
      async (keys) => {
        const turns = await this.services.sessionBatches.lastTurnsOf(this.caller, keys);
        const bySession = new Map(turns.map((t) => [t.sessionId, t]));
        return keys.map((k) => bySession.get(k.id) ?? null);
      },
      { cacheKeyFn: (k) => `${k.id}:${k.turnCount}` },
    ));
  }

  get participants(): DataLoader<string, EntityHeader[]> {
    return (this.participantsLoader ??= new DataLoader(async (ids) => {
      const map = await this.services.sessionBatches.participantsOf(this.caller, ids);
      return ids.map((id) => map.get(id) ?? []);
    }));
  }

  get turns(): DataLoader<TurnWindowKey, TurnRecord[], string> {
    return (this.turnsLoader ??= new DataLoader(
      async (keys) => {
        // Sessions asking for the same window share one statement.
        const results = new Map<string, TurnRecord[]>();
        for (const group of groupBy(keys, windowOf).values()) {
          const w = group[0] as TurnWindowKey;
          const ids = group.map((k) => k.sessionId);
          const page = await this.services.sessionBatches.turnsOf(this.caller, ids, w);
          for (const k of group) results.set(turnsKey(k), page.get(k.sessionId) ?? []);
        }
        return keys.map((k) => results.get(turnsKey(k)) ?? []);
      },
      { cacheKeyFn: turnsKey },
    ));
  }

  get turnCountByStatus(): DataLoader<{ sessionId: string; status: TurnStatus }, number, string> {
    return (this.turnCountByStatusLoader ??= new DataLoader(
      async (keys) => {
        const results = new Map<string, number>();
        for (const group of groupBy(keys, (k) => k.status).values()) {
          const status = (group[0] as { status: TurnStatus }).status;
          const counts = await this.services.sessionBatches.countTurns(this.caller, group.map((k) => k.sessionId), status);
          for (const k of group) results.set(`${k.sessionId}:${status}`, counts.get(k.sessionId) ?? 0);
        }
        return keys.map((k) => results.get(`${k.sessionId}:${k.status}`) ?? 0);
      },
      { cacheKeyFn: (k) => `${k.sessionId}:${k.status}` },
    ));
  }

  /** Any Node by id (`node`, `nodes`): every alias and list of one operation shares one batch. */
  get node(): DataLoader<string, NodeValue | null> {
    return (this.nodeLoader ??= new DataLoader((ids) => findNodes(this.caller, this.services, ids)));
  }

  /** Where a session was forked from; null for a session that is no fork. */
  get forkOrigin(): DataLoader<string, SessionForkRecord | null> {
    return (this.forkOriginLoader ??= new DataLoader(async (ids) => {
      const map = await this.services.forkLineage.originsOf(this.caller, ids);
      return ids.map((id) => map.get(id) ?? null);
    }));
  }

  /** The turn a fork's copied turn is a copy of; null for a turn run in its own session. */
  get turnOrigin(): DataLoader<string, ForkOrigin | null> {
    return (this.turnOriginLoader ??= new DataLoader(async (ids) => {
      const map = await this.services.forkLineage.turnOriginsOf(this.caller, ids);
      return ids.map((id) => map.get(id) ?? null);
    }));
  }
}

function byId<T extends { id: string }>(ids: readonly string[], rows: readonly T[]): (T | null)[] {
  const map = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => map.get(id) ?? null);
}

const windowOf = (k: TurnWindowKey) => `${k.afterSequence}:${k.limit}:${k.status ?? ''}`;
const turnsKey = (k: TurnWindowKey) => `${k.sessionId}:${windowOf(k)}`;

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}
