import type { Caller, EntityHeader, OrgScope } from '../domain/caller';
import { notFound } from '../domain/errors';
import { canRead } from '../domain/visibility';
import type { Dialect } from '../persistence/dialect';
import type { Database } from '../persistence/database';
import type { Sql, Statement } from '../persistence/sql';
import { SESSION_COLUMNS, sessionRowOf, type RawSessionRow } from './records';
import type { SessionRow, TurnRow } from './session.entities';
import { TURN_COLUMNS, turnRowOf, type RawTurnRow } from './turn-rows';

const ADD_PARTICIPANT = 'INSERT INTO agent_session_participants (session_id, user_id, org_id, user_name, joined_date) VALUES (?, ?, ?, ?, ?)';

/** The statements of one dialect, written once: MySQL locks the rows it reads; SQLite serialises its transactions. */
function statementsFor(dialect: Dialect) {
  const lock = dialect === 'sqlite' ? '' : ' FOR UPDATE';
  return {
    // The participant check rides along: a locking read does not lock a subquery's rows, and
    // the subquery reads after the session row's lock is granted, so it sees every committed join.
    visibleSession: `SELECT ${SESSION_COLUMNS},
  EXISTS (SELECT 1 FROM agent_session_participants p WHERE p.session_id = s.id AND p.user_id = ?) AS caller_is_participant
  FROM agent_sessions s WHERE s.id = ? AND s.org_id = ?${lock}`,
    session: `SELECT ${SESSION_COLUMNS} FROM agent_sessions s WHERE s.id = ? AND s.org_id = ?${lock}`,
    turn: `SELECT ${TURN_COLUMNS} FROM agent_session_turns t WHERE t.id = ? AND t.session_id = ? AND t.org_id = ?${lock}`,
    joinIfNew:
      dialect === 'sqlite'
        ? `${ADD_PARTICIPANT} ON CONFLICT (session_id, user_id) DO NOTHING`
        : `${ADD_PARTICIPANT} ON DUPLICATE KEY UPDATE user_id = user_id`,
    sessionAndTurn: `SELECT ${SESSION_COLUMNS}, ${TURN_COLUMNS}
  FROM agent_sessions s JOIN agent_session_turns t ON t.session_id = s.id AND t.org_id = s.org_id
  WHERE s.id = ? AND s.org_id = ? AND t.id = ?${lock}`,
  };
}

/**
 * Row access inside the turn lifecycle's transactions. A session or turn read here stays
 * locked until the transaction ends, so the next sequence number, a status change and the
 * session's counters cannot race (SQLite has no row locks; the database wrapper serialises
 * its transactions instead). Every statement is scoped by org.
 */
export class SessionLocks {
  private readonly statements: ReturnType<typeof statementsFor>;

  constructor(db: Pick<Database, 'dialect'>) {
    this.statements = statementsFor(db.dialect);
  }

  /** The session the caller may see (NOT_FOUND otherwise), and whether the caller takes part in it: one statement. */
  async visibleSession(sql: Sql, caller: Caller, id: string): Promise<SessionRow & { callerIsParticipant: boolean }> {
    const [raw] = await sql.rows<RawSessionRow & { caller_is_participant: number | string }>(this.statements.visibleSession, [
      caller.userId,
      id,
      caller.orgId,
    ]);
    if (!raw) throw notFound('session');
    const row = sessionRowOf(raw);
    const callerIsParticipant = Number(raw.caller_is_participant) > 0;
    if (!canRead(caller, row, callerIsParticipant)) throw notFound('session');
    return { ...row, callerIsParticipant };
  }

  async session(sql: Sql, scope: OrgScope, id: string): Promise<SessionRow> {
    const [raw] = await sql.rows<RawSessionRow>(this.statements.session, [id, scope.orgId]);
    if (!raw) throw notFound('session');
    return sessionRowOf(raw);
  }

  async turn(sql: Sql, scope: OrgScope, sessionId: string, turnId: string): Promise<TurnRow> {
    const [raw] = await sql.rows<RawTurnRow>(this.statements.turn, [turnId, sessionId, scope.orgId]);
    if (!raw) throw notFound('turn');
    return turnRowOf(raw);
  }

  /** A turn and its session, both locked, in one statement; NOT_FOUND names whichever is missing. */
  async sessionAndTurn(sql: Sql, scope: OrgScope, sessionId: string, turnId: string): Promise<{ session: SessionRow; turn: TurnRow }> {
    const [raw] = await sql.rows<RawSessionRow & RawTurnRow>(this.statements.sessionAndTurn, [sessionId, scope.orgId, turnId]);
    if (!raw) {
      await this.session(sql, scope, sessionId);
      throw notFound('turn');
    }
    return { session: sessionRowOf(raw), turn: turnRowOf(raw) };
  }

  /** Only for a user who is not yet a participant; the session row is locked (or new), so this cannot race. */
  addParticipant(session: Pick<SessionRow, 'id' | 'orgId'>, user: EntityHeader, now: Date): Statement {
    return { sql: ADD_PARTICIPANT, params: [session.id, user.id, session.orgId, user.text, now] };
  }

  /** Adds `user` unless already a participant (the first join stays): for a write that has not read the participants. */
  joinIfNew(session: Pick<SessionRow, 'id' | 'orgId'>, user: EntityHeader, now: Date): Statement {
    return { sql: this.statements.joinIfNew, params: [session.id, user.id, session.orgId, user.text, now] };
  }
}
