import DataLoader from 'dataloader';
import type { Caller, EntityHeader } from '../domain/caller';
import type { AgentContextRecord, ConversationContextRecord } from '../domain/contexts';
import type { SessionRecord } from '../domain/session';
import type { TurnRecord } from '../domain/turn';
import type { TurnStatus } from '../domain/turn-status';
import type { Services } from './services';

export interface TurnWindowKey {
  readonly sessionId: string;
  readonly afterSequence: number;
  readonly limit: number;
  readonly status: TurnStatus | null;
}

/**
 * Batching loaders bound to ONE caller. A new set is made for every HTTP request and every
 * subscription event, so a cached row can never reach another caller or a later event, and
 * every batch is scoped by the caller's org (never by whatever the first key says).
 */
export function createLoaders(caller: Caller, services: Services) {
  const { sessionBatches: batches, contexts } = services;
  const byId = <T extends { id: string }>(ids: readonly string[], rows: readonly T[]) => {
    const map = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => map.get(id) ?? null);
  };

  const session = new DataLoader<string, SessionRecord | null>(async (ids) => byId(ids, await batches.sessionsByIds(caller, ids)));

  return {
    agentContext: new DataLoader<string, AgentContextRecord | null>(async (ids) =>
      byId(ids, await contexts.agentContextsByIds(caller.orgId, ids)),
    ),
    conversationContext: new DataLoader<string, ConversationContextRecord | null>(async (ids) =>
      byId(ids, await contexts.conversationContextsByIds(caller.orgId, ids)),
    ),
    session,
    turn: new DataLoader<string, TurnRecord | null>(async (ids) => byId(ids, await batches.turnsByIds(caller, ids))),
    lastTurn: new DataLoader<Pick<SessionRecord, 'id' | 'turnCount'>, TurnRecord | null, string>(
      async (keys) => {
        const turns = await batches.lastTurnsOf(caller, keys);
        const bySession = new Map(turns.map((t) => [t.sessionId, t]));
        return keys.map((k) => bySession.get(k.id) ?? null);
      },
      { cacheKeyFn: (k) => `${k.id}:${k.turnCount}` },
    ),
    participants: new DataLoader<string, EntityHeader[]>(async (ids) => {
      const map = await batches.participantsOf(caller, ids);
      return ids.map((id) => map.get(id) ?? []);
    }),
    turns: new DataLoader<TurnWindowKey, TurnRecord[], string>(
      async (keys) => {
        // Sessions asking for the same window share one statement.
        const results = new Map<string, TurnRecord[]>();
        for (const group of groupBy(keys, windowOf).values()) {
          const w = group[0] as TurnWindowKey;
          const ids = group.map((k) => k.sessionId);
          const page = await batches.turnsOf(caller, ids, w);
          for (const k of group) results.set(turnsKey(k), page.get(k.sessionId) ?? []);
        }
        return keys.map((k) => results.get(turnsKey(k)) ?? []);
      },
      { cacheKeyFn: turnsKey },
    ),
    turnCountByStatus: new DataLoader<{ sessionId: string; status: TurnStatus }, number, string>(
      async (keys) => {
        const results = new Map<string, number>();
        for (const group of groupBy(keys, (k) => k.status).values()) {
          const status = (group[0] as { status: TurnStatus }).status;
          const counts = await batches.countTurns(caller, group.map((k) => k.sessionId), status);
          for (const k of group) results.set(`${k.sessionId}:${status}`, counts.get(k.sessionId) ?? 0);
        }
        return keys.map((k) => results.get(`${k.sessionId}:${k.status}`) ?? 0);
      },
      { cacheKeyFn: (k) => `${k.sessionId}:${k.status}` },
    ),
  };
}

export type Loaders = ReturnType<typeof createLoaders>;

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
