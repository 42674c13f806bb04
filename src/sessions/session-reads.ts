import type { EntityManager } from 'typeorm';
import { isAdmin, type Caller } from '../domain/caller';
import { forbidden } from '../domain/errors';
import type { PageRequest } from '../domain/pagination';
import type { SessionFilter, SessionOrder, SessionRecord } from '../domain/session';
import type { TurnRecord } from '../domain/turn';
import { LIMITS, optionalText } from '../domain/validation';
import type { Database } from '../persistence/database';
import { toSessionRecord, toTurnRecord } from './records';
import { SessionList } from './session-list';
import { applyVisibility, visibility, type Condition } from './session-query';
import type { ListOptions, SessionPage, SessionReader } from './session-store.port';
import type { SessionEntities, SessionRow } from './session.entities';
import { dateOf, nullableDateOf, nullableNumberOf } from './raw-values';
import type { TurnStatus } from '../domain/turn-status';

/** DD-003 reads: one session, one turn, the last turn, and filtered, ordered lists; never more than the caller may see. */
export class SessionReads implements SessionReader {
  private readonly list: SessionList;

  constructor(private readonly db: Database<SessionEntities>) {
    this.list = new SessionList(db);
  }

  /**
   * Every execute reads its session: one plain statement with the visibility rule, mapped by
   * hand (the query builder and entity hydration cost more CPU than the database spent).
   */
  async getSession(caller: Caller, id: string): Promise<SessionRecord | null> {
    const params: unknown[] = [id];
    const where = visibility(caller, isAdmin(caller)).map((c) => positional(c, params));
    const rows = (await this.db.dataSource.query(
      `SELECT ${SESSION_COLUMNS} FROM agent_sessions s WHERE s.id = ? AND ${where.join(' AND ')}`,
      params,
    )) as RawSessionRow[];
    const row = rows[0];
    return row ? toSessionRecord(sessionRowOf(row)) : null;
  }

  async getTurn(caller: Caller, sessionId: string, turnId: string): Promise<TurnRecord | null> {
    const session = await this.visibleSessionRow(this.db.dataSource.manager, caller, sessionId);
    if (!session) return null;
    const row = await this.db.dataSource.manager.findOne(this.db.entities.turns, {
      where: { id: turnId, sessionId: session.id },
    });
    return row ? toTurnRecord(row) : null;
  }

  async getLastTurn(caller: Caller, sessionId: string): Promise<TurnRecord | null> {
    const session = await this.visibleSessionRow(this.db.dataSource.manager, caller, sessionId);
    if (!session || session.turnCount === 0) return null;
    const row = await this.db.dataSource.manager.findOne(this.db.entities.turns, {
      where: { sessionId: session.id, sequenceNumber: session.turnCount },
    });
    return row ? toTurnRecord(row) : null;
  }

  listSessions(
    caller: Caller,
    filter: SessionFilter,
    order: SessionOrder,
    page: PageRequest,
    options: ListOptions = { withTotalCount: false },
  ): Promise<SessionPage> {
    this.assertFilter(caller, filter);
    return this.list.list(caller, filter, order, page, options);
  }

  listSessionsForUser(caller: Caller, userId: string, page: PageRequest, options?: ListOptions): Promise<SessionPage> {
    return this.listSessions(caller, { participantId: userId }, 'LAST_UPDATED_DESC', page, options);
  }

  assertFilter(caller: Caller, filter: SessionFilter): void {
    checkFilter(filter);
    if (filter.includeDeleted && !isAdmin(caller)) throw forbidden('includeDeleted is for organisation admins');
  }

  private async visibleSessionRow(em: EntityManager, caller: Caller, id: string): Promise<SessionRow | null> {
    const qb = em.createQueryBuilder(this.db.entities.sessions, 's').where('s.id = :id', { id });
    applyVisibility(qb, caller, isAdmin(caller));
    return qb.getOne();
  }
}

/** Over-long filter values are refused rather than silently matching nothing. */
function checkFilter(filter: SessionFilter): void {
  const ids = ['participantId', 'ownerUserId', 'agentContextId', 'conversationContextId'] as const;
  for (const field of ids) optionalText(field, filter[field], LIMITS.id);
  optionalText('workspaceId', filter.workspaceId, LIMITS.shortText);
  optionalText('repo', filter.repo, LIMITS.shortText);
  optionalText('search', filter.search, LIMITS.search);
}

/** A condition's named parameters (`:name`) as positional ones, appended to `params` in order. */
function positional(condition: Condition, params: unknown[]): string {
  return condition.sql.replace(/:(\w+)/g, (_m, name: string) => {
    params.push(condition.params[name]);
    return '?';
  });
}

/** The columns of session.entities.ts's sessions, aliased `s`. */
const SESSION_COLUMNS = `s.id, s.org_id, s.org_name, s.owner_user_id, s.owner_user_name, s.name, s.session_key, s.description,
  s.is_public, s.is_draft, s.is_deleted, s.category, s.creation_date, s.last_updated_date, s.agent_context_id,
  s.conversation_context_id, s.workspace_id, s.repo, s.default_language, s.turn_count, s.last_turn_status,
  s.last_turn_date, s.input_tokens, s.output_tokens, s.cached_input_tokens, s.estimated_cost_usd, s.usage_estimated`;

type Flag = number | boolean | string;

/** A session row as the drivers hand it out (see raw-values.ts). */
interface RawSessionRow {
  readonly id: string;
  readonly org_id: string;
  readonly org_name: string;
  readonly owner_user_id: string;
  readonly owner_user_name: string;
  readonly name: string;
  readonly session_key: string | null;
  readonly description: string | null;
  readonly is_public: Flag;
  readonly is_draft: Flag;
  readonly is_deleted: Flag;
  readonly category: string | null;
  readonly creation_date: Date | string;
  readonly last_updated_date: Date | string;
  readonly agent_context_id: string;
  readonly conversation_context_id: string | null;
  readonly workspace_id: string | null;
  readonly repo: string | null;
  readonly default_language: string | null;
  readonly turn_count: number | string;
  readonly last_turn_status: TurnStatus | null;
  readonly last_turn_date: Date | string | null;
  readonly input_tokens: number | string;
  readonly output_tokens: number | string;
  readonly cached_input_tokens: number | string | null;
  readonly estimated_cost_usd: number | string | null;
  readonly usage_estimated: Flag;
}

const flagOf = (value: Flag): boolean => Boolean(Number(value));

function sessionRowOf(raw: RawSessionRow): SessionRow {
  return {
    id: raw.id,
    orgId: raw.org_id,
    orgName: raw.org_name,
    ownerUserId: raw.owner_user_id,
    ownerUserName: raw.owner_user_name,
    name: raw.name,
    key: raw.session_key,
    description: raw.description,
    isPublic: flagOf(raw.is_public),
    isDraft: flagOf(raw.is_draft),
    isDeleted: flagOf(raw.is_deleted),
    category: raw.category,
    creationDate: dateOf(raw.creation_date),
    lastUpdatedDate: dateOf(raw.last_updated_date),
    agentContextId: raw.agent_context_id,
    conversationContextId: raw.conversation_context_id,
    workspaceId: raw.workspace_id,
    repo: raw.repo,
    defaultLanguage: raw.default_language,
    turnCount: Number(raw.turn_count),
    lastTurnStatus: raw.last_turn_status,
    lastTurnDate: nullableDateOf(raw.last_turn_date),
    inputTokens: Number(raw.input_tokens),
    outputTokens: Number(raw.output_tokens),
    cachedInputTokens: Number(raw.cached_input_tokens ?? 0),
    estimatedCostUsd: nullableNumberOf(raw.estimated_cost_usd),
    usageEstimated: flagOf(raw.usage_estimated),
  };
}
