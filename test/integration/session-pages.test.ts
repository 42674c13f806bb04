import Database from 'better-sqlite3';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { bulkSeedSessions, RARE_WORD } from '../../src/cli/bulk-seed';
import { seedDemoData } from '../../src/cli/seed-data';
import { ContextDirectory } from '../../src/contexts/context-directory';
import type { Caller } from '../../src/domain/caller';
import type { ListPageRequest } from '../../src/domain/pagination';
import { matchesSearch, searchWords } from '../../src/domain/search-words';
import type { SessionFilter, SessionOrder } from '../../src/domain/session';
import type { MigrationInterface } from 'typeorm';
import { SessionCounts1765100000002 } from '../../src/persistence/migrations/1765100000002-session-counts';
import { SessionSearch1765100000001 } from '../../src/persistence/migrations/1765100000001-session-search';
import { SessionSearchRows1765300000000 } from '../../src/persistence/migrations/1765300000000-session-search-rows';
import { COPIED, ParticipantLists1765400000000 } from '../../src/persistence/migrations/1765400000000-participant-lists';
import type { SqlValue } from '../../src/persistence/sql';
import { dateOf } from '../../src/sessions/raw-values';
import { cursorOf, indexFor, orderBy } from '../../src/sessions/session-keyset';
import { COUNT_CAP, listStatements, type ListStatement } from '../../src/sessions/session-list';
import { SEARCH_COUNT_CAP } from '../../src/sessions/session-search';
import { filterConditions, paramsOf, whereOf } from '../../src/sessions/session-query';
import { createSessionStore, type SessionStore } from '../../src/sessions/session-store';
import { mysqlTestDatabase, sqliteTestDatabase, type TestDatabase, type TestDatabaseFactory } from '../support/db';
import { describeWithMysql } from '../support/services';
import { user } from '../support/testkit/users';

const ADMIN = user('user-1', 'acme', ['admin']);
const MEMBER = user('user-2');
const SESSIONS = 2_000;
const PAGE = 37;
const DAY = 24 * 3600 * 1000;
const ORDER_INDEX: Record<SessionOrder, string> = { LAST_UPDATED_DESC: 'updated', LAST_UPDATED_ASC: 'updated', CREATED_DESC: 'created', NAME_ASC: 'name' };
const COLUMN: Record<SessionOrder, string> = { LAST_UPDATED_DESC: 'last_updated_date', LAST_UPDATED_ASC: 'last_updated_date', CREATED_DESC: 'creation_date', NAME_ASC: 'name' };

/** Every list shape a client can ask for, one of each kind: orders, filters, admin and member. */
interface Shape {
  readonly name: string;
  readonly caller: Caller;
  readonly order: SessionOrder;
  readonly filter: SessionFilter;
  /** Walks an index that does not follow the order: sorts the owner's sessions (bounded by them, not by the org). */
  readonly sorted?: true;
}

const SHAPES: readonly Shape[] = [
  { name: 'admin, last updated', caller: ADMIN, order: 'LAST_UPDATED_DESC', filter: {} },
  { name: 'member, last updated', caller: MEMBER, order: 'LAST_UPDATED_DESC', filter: {} },
  { name: 'member, oldest update first', caller: MEMBER, order: 'LAST_UPDATED_ASC', filter: {} },
  { name: 'admin, created', caller: ADMIN, order: 'CREATED_DESC', filter: {} },
  { name: 'member, by name', caller: MEMBER, order: 'NAME_ASC', filter: {} },
  { name: 'admin, deleted too', caller: ADMIN, order: 'LAST_UPDATED_DESC', filter: { includeDeleted: true } },
  { name: 'admin, by owner', caller: ADMIN, order: 'LAST_UPDATED_DESC', filter: { ownerUserId: 'user-3' } },
  { name: 'member, by owner, by name', caller: MEMBER, order: 'NAME_ASC', filter: { ownerUserId: 'user-3' }, sorted: true },
  { name: 'admin, by participant', caller: ADMIN, order: 'LAST_UPDATED_DESC', filter: { participantId: 'user-4' } },
  { name: 'admin, by participant, deleted too, created', caller: ADMIN, order: 'CREATED_DESC', filter: { participantId: 'user-4', includeDeleted: true } },
  { name: 'member, by participant, by name', caller: MEMBER, order: 'NAME_ASC', filter: { participantId: 'user-3' } },
  { name: 'member, by participant, oldest update first, in a window', caller: MEMBER, order: 'LAST_UPDATED_ASC', filter: { participantId: 'user-2', updatedAfter: new Date(Date.now() - 300 * DAY) } },
  { name: 'admin, by status', caller: ADMIN, order: 'LAST_UPDATED_DESC', filter: { lastTurnStatus: 'COMPLETED' } },
  { name: 'member, updated in a window', caller: MEMBER, order: 'LAST_UPDATED_DESC', filter: { updatedAfter: new Date(Date.now() - 200 * DAY), updatedBefore: new Date(Date.now() - 60 * DAY) } },
];

function pagesSuite(open: TestDatabaseFactory): void {
  let t: TestDatabase;
  let store: SessionStore;

  /** The statement's rows, parameters bound as the gateway binds them. */
  const run = <T>(s: ListStatement): Promise<T[]> => {
    const [text, params] = t.db.dataSource.driver.escapeQueryWithParameters(s.sql, paramsOf(s.conditions));
    return t.db.read<T>(text, params as SqlValue[]);
  };

  /**
   * The whole list in one statement without any cursor: what the pages must add up to. From
   * the sessions' own columns, a participant as a test of each (not the participant rows'
   * copies, which the pages walk); a search as the list states it.
   */
  async function everything(caller: Caller, filter: SessionFilter, order: SessionOrder): Promise<string[]> {
    const s =
      filter.search == null
        ? { sql: `SELECT s.id FROM agent_sessions s WHERE ${whereOf(filterConditions(caller, filter))} ORDER BY ${orderBy(order)}`, conditions: filterConditions(caller, filter) }
        : listStatements(t.db.dialect, caller, filter, order, { first: 1, after: null }, false).page;
    return (await run<{ id: string }>({ sql: s.sql.replace(/LIMIT \d+$/, '') + ' LIMIT 100000', conditions: s.conditions })).map((r) => r.id);
  }

  beforeAll(async () => {
    t = await open();
    store = createSessionStore({ db: t.db, events: { turnStatusChanged: () => undefined } });
    const contexts = new ContextDirectory(t.db);
    for (const orgId of ['acme', 'globex']) {
      const demo = await seedDemoData(
        { sessions: store.lifecycle, contexts },
        { orgId, orgName: orgId, users: 6, sessions: orgId === 'acme' ? 250 : 20, turnsPerSession: 1, randomSeed: 3 },
      );
      await bulkSeedSessions(t.db, {
        orgId,
        orgName: orgId,
        users: 6,
        sessions: orgId === 'acme' ? SESSIONS : 300,
        participants: [2, 3],
        publicShare: 0.35,
        deletedShare: 0.05,
        randomSeed: 5,
        agentContextIds: demo.agentContextIds,
        conversationContextIds: demo.conversationContextIds,
        until: new Date(Date.now() - 31 * DAY),
      });
    }
  }, 180_000);
  afterAll(() => t.dispose());

  it.each(SHAPES.map((s) => [s.name, s] as const))('pages forward and back through the whole list, with both flags right: %s', async (_name, shape) => {
    const expected = await everything(shape.caller, shape.filter, shape.order);
    expect(expected.length).toBeGreaterThan(2 * PAGE);
    const walk = async (forward: boolean) => {
      const seen: string[][] = [];
      let cursor: string | null = null;
      for (;;) {
        const request: ListPageRequest = forward ? { first: PAGE, after: cursor } : { last: PAGE, before: cursor };
        const page = await store.reads.listSessions(shape.caller, shape.filter, shape.order, request, { withTotalCount: true });
        const ids = page.items.map((s) => s.id);
        const done = seen.flat().length;
        // Flags: the pages behind the walk exist exactly when it has moved; ahead, until the end.
        expect(forward ? page.hasPreviousPage : page.hasNextPage).toBe(done > 0);
        const ahead = forward ? page.hasNextPage : page.hasPreviousPage;
        expect(ahead).toBe(done + ids.length < expected.length);
        expect(await page.totalCount()).toBe(expected.length);
        seen.push(ids);
        if (!ahead) break;
        const edge = forward ? page.items.at(-1) : page.items.at(0);
        cursor = page.cursorOf(edge!);
      }
      return forward ? seen.flat() : seen.reverse().flat();
    };
    expect(await walk(true)).toEqual(expected);
    expect(await walk(false)).toEqual(expected);
  }, 120_000);

  it('caps the count at 10,000 and says it is a lower bound', async () => {
    const demo = await new ContextDirectory(t.db).listAgentContexts('acme');
    const ids = demo.map((c) => c.id);
    await bulkSeedSessions(t.db, {
      orgId: 'huge', orgName: 'Huge', users: 3, sessions: COUNT_CAP + 5, participants: [1, 2], publicShare: 1, deletedShare: 0,
      randomSeed: 1, agentContextIds: ids, conversationContextIds: [], until: new Date(),
    });
    const admin = user('u', 'huge', ['admin']);
    const count = async (caller: Caller, filter: SessionFilter) => {
      const page = await store.reads.listSessions(caller, filter, 'LAST_UPDATED_DESC', { first: 10, after: null });
      return [await page.totalCount(), await page.countIsLowerBound?.()];
    };
    // What no counter covers is counted up to the cap.
    expect(await count(admin, { updatedBefore: new Date() })).toEqual([COUNT_CAP, true]);
    expect(await count(user('user-1', 'huge'), { lastTurnStatus: 'COMPLETED', updatedBefore: new Date() })).toEqual([0, false]);
    expect(await count(user('user-1', 'huge'), { updatedBefore: new Date() })).toEqual([COUNT_CAP, true]);
    // An admin's org, or an owner's sessions, and a member's list come from the counters: exact, whatever the size.
    expect(await count(admin, {})).toEqual([COUNT_CAP + 5, false]);
    expect(await count(user('user-1', 'huge'), {})).toEqual([COUNT_CAP + 5, false]);
    const [owned] = await count(admin, { ownerUserId: 'user-1' });
    expect(owned).toBeGreaterThan(COUNT_CAP / 4);
    expect(await count(admin, { ownerUserId: 'user-1', updatedBefore: new Date() })).toEqual([owned, false]);
  }, 120_000);

  /** Runs one migration down and up again on the populated database (later migrations stay as they are). */
  /** Undoes the migrations (the last first) and runs them again. */
  async function redo(...migrations: MigrationInterface[]): Promise<void> {
    const runner = t.db.dataSource.createQueryRunner();
    try {
      for (const m of [...migrations].reverse()) await m.down(runner);
      for (const m of migrations) await m.up(runner);
    } finally {
      await runner.release();
    }
  }

  /** The counters against a full COUNT of the sessions. */
  async function countersMatch(): Promise<void> {
    const key = 'org_id, owner_user_id, is_deleted, is_public';
    const counters = await t.db.read<Record<string, unknown>>(`SELECT ${key}, n FROM agent_session_counts WHERE n <> 0 ORDER BY ${key}`);
    const counted = await t.db.read<Record<string, unknown>>(`SELECT ${key}, COUNT(*) AS n FROM agent_sessions GROUP BY ${key} ORDER BY ${key}`);
    const norm = (rows: Record<string, unknown>[]) =>
      rows.map((r) => `${String(r.org_id)}/${String(r.owner_user_id)}/${Number(r.is_deleted)}/${Number(r.is_public)}=${Number(r.n)}`);
    expect(norm(counters)).toEqual(norm(counted));
    expect(counters.length).toBeGreaterThan(10);
    const byUser = 'org_id, user_id, is_deleted';
    const participantCounters = await t.db.read<Record<string, unknown>>(`SELECT ${byUser}, n FROM agent_session_participant_counts WHERE n <> 0 ORDER BY ${byUser}`);
    const participations = await t.db.read<Record<string, unknown>>(
      `SELECT p.org_id, p.user_id, s.is_deleted, COUNT(*) AS n FROM agent_session_participants p JOIN agent_sessions s ON s.id = p.session_id ` +
        `GROUP BY p.org_id, p.user_id, s.is_deleted ORDER BY p.org_id, p.user_id, s.is_deleted`,
    );
    const normUser = (rows: Record<string, unknown>[]) => rows.map((r) => `${String(r.org_id)}/${String(r.user_id)}/${Number(r.is_deleted)}=${Number(r.n)}`);
    expect(normUser(participantCounters)).toEqual(normUser(participations));
    expect(participantCounters.length).toBeGreaterThan(10);
    // Each participant row's copies of its session's sort keys and flag, byte for byte.
    const differ = COPIED.map((c) => (c === 'name' ? `CAST(p.name AS BINARY) <> CAST(s.name AS BINARY)` : `p.${c} <> s.${c}`)).join(' OR ');
    const stale = await t.db.read<{ n: number | string }>(
      `SELECT COUNT(*) AS n FROM agent_session_participants p JOIN agent_sessions s ON s.id = p.session_id WHERE ${t.db.dialect === 'sqlite' ? differ.replace(/CAST\((\w+)\.name AS BINARY\)/g, '$1.name COLLATE BINARY') : differ}`,
    );
    expect(Number(stale[0]?.n)).toBe(0);
  }

  it('keeps the counters equal to a full COUNT through creates, deletes, reruns, participants joining, and a migration on a populated database', async () => {
    await countersMatch();
    const ac = (await new ContextDirectory(t.db).listAgentContexts('acme'))[0]!.id;
    const session = await store.lifecycle.createSession(MEMBER, { name: 'Counted session', agentContextId: ac, isPublic: true });
    const turn = await store.lifecycle.addTurn(user('user-5'), session.id, { instructionSummary: 'join in', mode: 'ask', openAIModel: 'm' });
    await store.lifecycle.failTurn(user('user-5'), session.id, turn.id, { errors: ['x'] });
    await store.lifecycle.updateSession(MEMBER, session.id, { isPublic: false });
    await countersMatch();
    // A rename that changes only the case reorders the name list: the copies follow it.
    await store.lifecycle.updateSession(MEMBER, session.id, { name: 'COUNTED SESSION' });
    const byName = await store.reads.listSessions(ADMIN, { participantId: 'user-5' }, 'NAME_ASC', { first: 100, after: null });
    expect(byName.items.find((i) => i.id === session.id)?.name).toBe('COUNTED SESSION');
    await countersMatch();
    await store.lifecycle.deleteSession(ADMIN, session.id);
    await countersMatch();
    for (const includeDeleted of [false, true]) {
      const byParticipant = await store.reads.listSessions(ADMIN, { participantId: 'user-5', includeDeleted }, 'LAST_UPDATED_DESC', { first: 1, after: null });
      expect(await byParticipant.totalCount()).toBe((await everything(ADMIN, { participantId: 'user-5', includeDeleted }, 'LAST_UPDATED_DESC')).length);
    }
    const page = await store.reads.listSessions(ADMIN, {}, 'LAST_UPDATED_DESC', { first: 1, after: null });
    const withDeleted = await store.reads.listSessions(ADMIN, { includeDeleted: true }, 'LAST_UPDATED_DESC', { first: 1, after: null });
    expect(await withDeleted.totalCount()).toBeGreaterThan(await page.totalCount());
    expect(await page.totalCount()).toBe((await everything(ADMIN, {}, 'LAST_UPDATED_DESC')).length);
    for (const member of [MEMBER, user('user-5'), user('user-6')]) {
      const listed = await store.reads.listSessions(member, {}, 'LAST_UPDATED_DESC', { first: 1, after: null });
      expect(await listed.totalCount()).toBe((await everything(member, {}, 'LAST_UPDATED_DESC')).length);
    }
    // Down and up again on the populated database: filled from the sessions.
    await redo(new SessionCounts1765100000002());
    await countersMatch();
    await redo(new ParticipantLists1765400000000());
    await countersMatch();
  }, 120_000);

  it('refuses a cursor of another order, on either side', async () => {
    const page = await store.reads.listSessions(ADMIN, {}, 'NAME_ASC', { first: 5, after: null });
    const cursor = page.cursorOf(page.items[0]!);
    await expect(store.reads.listSessions(ADMIN, {}, 'CREATED_DESC', { last: 5, before: cursor })).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
      details: { argument: 'before' },
    });
  });

  /** Every session of acme the caller sees, with its text, in the list's order: the search rule applied in JS. */
  async function searchedInJs(caller: Caller, search: string): Promise<string[]> {
    const s = listStatements(t.db.dialect, caller, {}, 'LAST_UPDATED_DESC', { first: 1, after: null }, false).page;
    const rows = await run<{ id: string; name: string; description: string | null }>({ sql: s.sql.replace(/LIMIT \d+$/, 'LIMIT 100000'), conditions: s.conditions });
    const words = searchWords(search);
    return rows.filter((r) => matchesSearch(words, r.name, r.description)).map((r) => r.id);
  }

  const listed = async (caller: Caller, search: string) => {
    const page = await store.reads.listSessions(caller, { search }, 'LAST_UPDATED_DESC', { first: 100, after: null }, { withTotalCount: true });
    return { ids: page.items.map((i) => i.id), total: await page.totalCount(), lowerBound: await page.countIsLowerBound?.() };
  };

  it.each([
    ['two words, as prefixes, in any case', 'RATE limit'],
    ['a word of the description', 'seeded'],
    ['a rare word of the description', RARE_WORD],
    ['a number in the name', '#1234'],
  ])('searches names and descriptions on the full-text index: %s', async (_what, search) => {
    for (const caller of [ADMIN, MEMBER]) {
      const expected = await searchedInJs(caller, search);
      const { ids, total, lowerBound } = await listed(caller, search);
      expect(ids).toEqual(expected.slice(0, 100));
      // A search counts up to 100 and then says it stopped.
      expect([total, lowerBound]).toEqual([Math.min(expected.length, SEARCH_COUNT_CAP), expected.length > SEARCH_COUNT_CAP]);
    }
  });

  it('finds a session by its new name once renamed, and no longer by its old one', async () => {
    const session = await store.lifecycle.createSession(ADMIN, { name: 'Wombat migration plan', agentContextId: (await new ContextDirectory(t.db).listAgentContexts('acme'))[0]!.id });
    expect((await listed(ADMIN, 'wombat')).ids).toEqual([session.id]);
    await store.lifecycle.updateSession(ADMIN, session.id, { name: 'Platypus migration plan' });
    expect((await listed(ADMIN, 'platypus')).ids).toEqual([session.id]);
    expect((await listed(ADMIN, 'wombat')).ids).toEqual([]);
    // Words may come from the name and the description alike.
    await store.lifecycle.updateSession(ADMIN, session.id, { description: 'Formerly the wombat plan' });
    expect((await listed(ADMIN, 'wombat platyp')).ids).toEqual([session.id]);
    const tooShort = Promise.resolve().then(() => store.reads.listSessions(ADMIN, { search: 'a b' }, 'LAST_UPDATED_DESC', { first: 5, after: null }));
    await expect(tooShort).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
  });

  it('indexes the sessions of a populated database when the migration runs, and reads the index, not the org', async () => {
    await redo(new SessionSearch1765100000001(), new SessionSearchRows1765300000000());
    const expected = await searchedInJs(ADMIN, 'audit log');
    expect(expected.length).toBeGreaterThan(50);
    expect((await listed(ADMIN, 'audit log')).total).toBe(Math.min(expected.length, SEARCH_COUNT_CAP));
    const s = listStatements(t.db.dialect, MEMBER, { search: RARE_WORD }, 'LAST_UPDATED_DESC', { first: 25, after: null }, true).page;
    const [text, params] = t.db.dataSource.driver.escapeQueryWithParameters(s.sql, paramsOf(s.conditions));
    if (t.url === null) {
      const sqlite = new Database(join(t.dataDir, 'gateway.sqlite'), { readonly: true });
      const plan = (sqlite.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...(params as SqlValue[]).map(sqliteValue)) as { detail: string }[]).map((r) => r.detail);
      sqlite.close();
      expect(plan.join('\n')).toMatch(/SCAN agent_session_search VIRTUAL TABLE INDEX/);
      expect(plan.join('\n')).not.toMatch(/SCAN s\b/);
    } else {
      const conn = await createConnection({ uri: t.url });
      const [explained] = await conn.query(`EXPLAIN ${text}`, params);
      await conn.end();
      const rows = explained as { table: string; type: string; key: string | null }[];
      expect(rows.find((r) => r.table === 'ss')).toMatchObject({ type: 'fulltext', key: 'ft_session_search' });
      expect(rows.find((r) => r.table === 's')?.type).not.toBe('ALL');
    }
  }, 120_000);

  /** What a statement costs: index and row reads on MySQL/MariaDB, and the plan's shape on SQLite. */
  async function cost(s: ListStatement, shape: Shape, deep: boolean): Promise<number> {
    // A participant filter walks the user's participant rows (sessions/session-keyset.ts participantsFrom).
    const byParticipant = shape.filter.participantId != null;
    const index = byParticipant ? `idx_participants_list_${ORDER_INDEX[shape.order]}` : indexFor(shape.order, shape.filter);
    const alias = byParticipant ? 'p' : 's';
    const [text, params] = t.db.dataSource.driver.escapeQueryWithParameters(s.sql, paramsOf(s.conditions));
    if (t.url === null) {
      const sqlite = new Database(join(t.dataDir, 'gateway.sqlite'), { readonly: true });
      try {
        const plan = (sqlite.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...(params as SqlValue[]).map(sqliteValue)) as { detail: string }[]).map((r) => r.detail);
        // One seek into the order's index, a range from the cursor on, and no sort: the page costs what it reads.
        expect(plan[0]).toMatch(new RegExp(`^SEARCH ${alias} USING (COVERING )?INDEX ${index} \\(org_id=\\?`));
        expect(plan.join('\n')).not.toMatch(/SCAN s\b/);
        if (!shape.sorted) expect(plan.join('\n')).not.toMatch(/TEMP B-TREE/);
        if (deep && !shape.sorted) expect(plan[0]).toMatch(new RegExp(`${COLUMN[shape.order]}[<>]\\?`));
        return 0;
      } finally {
        sqlite.close();
      }
    }
    const conn = await createConnection({ uri: t.url });
    try {
      const [explained] = await conn.query(`EXPLAIN ${text}`, params);
      const first = (explained as { key: string | null; type: string }[])[0];
      expect(first?.key).toBe(index);
      // The first page is the equality prefix; a page behind a cursor, a range from the cursor on.
      const windowed = shape.filter.updatedAfter != null && COLUMN[shape.order] === 'last_updated_date';
      expect(first?.type).toBe((deep && !shape.sorted) || windowed ? 'range' : 'ref');
      await conn.query('FLUSH STATUS');
      await conn.query(text, params);
      const [status] = await conn.query("SHOW SESSION STATUS LIKE 'Handler_read%'");
      return (status as { Value: string }[]).reduce((sum, r) => sum + Number(r.Value), 0);
    } finally {
      await conn.end();
    }
  }

  it.each(SHAPES.map((s) => [s.name, s] as const))('reads no more for a page near the end than for the first: %s', async (_name, shape) => {
    const s = listStatements(t.db.dialect, shape.caller, shape.filter, shape.order, { first: 1, after: null }, false).page;
    const rows = await run<{ id: string; name: string; creation_date: Date | string; last_updated_date: Date | string }>({
      sql: s.sql.replace(/LIMIT \d+$/, 'LIMIT 100000'),
      conditions: s.conditions,
    });
    const near = rows[rows.length - 30]!;
    const cursor = cursorOf(shape.order, { id: near.id, name: near.name, creationDate: dateOf(near.creation_date), lastUpdatedDate: dateOf(near.last_updated_date) });
    const statement = (after: string | null) => listStatements(t.db.dialect, shape.caller, shape.filter, shape.order, { first: 25, after }, true).page;
    const shallow = await cost(statement(null), shape, false);
    const deep = await cost(statement(cursor), shape, true);
    // On MariaDB: rows read at row ~2,000 within a small constant of those of the first page
    // (the page is 25 rows; a walk from the start would read the ~2,000 before the cursor).
    expect(deep).toBeLessThanOrEqual(shallow * 1.5 + 60);
  }, 60_000);
}

/** better-sqlite3 binds no Dates or booleans; the gateway's wrapper binds them as UTC text and 0/1. */
const sqliteValue = (v: SqlValue): string | number | null =>
  v instanceof Date ? v.toISOString().replace('T', ' ').replace('Z', '') : typeof v === 'boolean' ? (v ? 1 : 0) : v;

describe('session pages on embedded SQLite', () => pagesSuite(sqliteTestDatabase));
describeWithMysql('session pages on MySQL/MariaDB', () => pagesSuite(mysqlTestDatabase));
