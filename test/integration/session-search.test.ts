import Database from 'better-sqlite3';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { bulkSeedSessions } from '../../src/cli/bulk-seed';
import { seedDemoData } from '../../src/cli/seed-data';
import { ContextDirectory } from '../../src/contexts/context-directory';
import type { Caller } from '../../src/domain/caller';
import type { ListPageRequest } from '../../src/domain/pagination';
import { matchesSearch, searchWords } from '../../src/domain/search-words';
import type { SessionOrder } from '../../src/domain/session';
import type { SqlValue } from '../../src/persistence/sql';
import { listStatements, SEARCH_COUNT_CAP, SessionList, type ListStatement } from '../../src/sessions/session-list';
import { paramsOf, type SearchPath } from '../../src/sessions/session-query';
import { searchProbe } from '../../src/sessions/session-search';
import { createSessionStore } from '../../src/sessions/session-store';
import { mysqlTestDatabase, sqliteTestDatabase, type TestDatabase, type TestDatabaseFactory } from '../support/db';
import { describeWithMysql } from '../support/services';
import { user } from '../support/testkit/users';

const ADMIN = user('user-1', 'acme', ['admin']);
const MEMBER = user('user-2');
const SESSIONS = 3_000;
const PAGE = 25;
const DAY = 24 * 3600 * 1000;
/** Lower than the gateway's (SEARCH_WALK_AT), so that "seeded" (in half the 3,000 sessions) walks. */
const WALK_AT = 500;
/** In the description of half the seeded sessions ("Seeded session about …"). */
const COMMON = 'seeded';
/** In the names of three public sessions only. */
const RARE = 'numbat';

/** Issue 35: a search's page costs about a page, for a word in most sessions as for a rare one. */
function searchSuite(open: TestDatabaseFactory): void {
  let t: TestDatabase;

  const bound = (s: ListStatement): [string, SqlValue[]] => {
    const [text, params] = t.db.dataSource.driver.escapeQueryWithParameters(s.sql, paramsOf(s.conditions));
    return [text, params as SqlValue[]];
  };

  beforeAll(async () => {
    t = await open();
    const store = createSessionStore({ db: t.db, events: { turnStatusChanged: () => undefined } });
    const demo = await seedDemoData(
      { sessions: store.lifecycle, contexts: new ContextDirectory(t.db) },
      { orgId: 'acme', orgName: 'acme', users: 6, sessions: 5, turnsPerSession: 1, randomSeed: 3 },
    );
    await bulkSeedSessions(t.db, {
      orgId: 'acme', orgName: 'acme', users: 6, sessions: SESSIONS, participants: [2, 3], publicShare: 0.35, deletedShare: 0.05,
      randomSeed: 5, agentContextIds: demo.agentContextIds, conversationContextIds: demo.conversationContextIds, until: new Date(Date.now() - DAY),
    });
    for (const n of [1, 2, 3]) {
      await store.lifecycle.createSession(ADMIN, { name: `Numbat survey ${n}`, agentContextId: demo.agentContextIds[0]!, isPublic: true });
    }
  }, 180_000);
  afterAll(() => t.dispose());

  /** What the caller sees of acme, in the order, with the search rule applied in JS: a full scan. */
  async function scanned(caller: Caller, search: string, order: SessionOrder): Promise<string[]> {
    const s = listStatements(t.db.dialect, caller, {}, order, { first: 1, after: null }, false).page;
    const [text, params] = bound({ sql: s.sql.replace(/LIMIT \d+$/, 'LIMIT 100000'), conditions: s.conditions });
    const rows = await t.db.read<{ id: string; name: string; description: string | null }>(text, params);
    const words = searchWords(search);
    return rows.filter((r) => matchesSearch(words, r.name, r.description)).map((r) => r.id);
  }

  it.each([
    ['a word in half the sessions, walked', COMMON, WALK_AT],
    ['two words, walked', 'RATE limit', 20],
    ['two words, from the matches', 'RATE limit', 1_000_000],
    ['a rare word, from the matches', RARE, WALK_AT],
    ['a rare word, walked', RARE, 1],
  ] as const)('pages forward and back through the same sessions as a full scan: %s', async (_what, search, walkAt) => {
    const list = new SessionList(t.db, walkAt);
    for (const [caller, order] of [[ADMIN, 'LAST_UPDATED_DESC'], [MEMBER, 'NAME_ASC']] as const) {
      const expected = await scanned(caller, search, order);
      expect(expected.length).toBeGreaterThan(0);
      const size = Math.min(100, Math.max(PAGE, Math.ceil(expected.length / 8)));
      const walk = async (forward: boolean) => {
        const seen: string[][] = [];
        let cursor: string | null = null;
        for (;;) {
          const request: ListPageRequest = forward ? { first: size, after: cursor } : { last: size, before: cursor };
          const page = await list.list(caller, { search }, order, request, { withTotalCount: true });
          seen.push(page.items.map((s) => s.id));
          expect(forward ? page.hasPreviousPage : page.hasNextPage).toBe(seen.length > 1);
          expect(await page.totalCount()).toBe(Math.min(expected.length, SEARCH_COUNT_CAP));
          expect(await page.countIsLowerBound?.()).toBe(expected.length > SEARCH_COUNT_CAP);
          if (!(forward ? page.hasNextPage : page.hasPreviousPage)) break;
          cursor = page.cursorOf((forward ? page.items.at(-1) : page.items.at(0))!);
        }
        return forward ? seen.flat() : seen.reverse().flat();
      };
      expect(await walk(true)).toEqual(expected);
      expect(await walk(false)).toEqual(expected);
    }
  }, 120_000);

  /** Index and row reads of the statement on MySQL/MariaDB; the plan's first step on SQLite. */
  async function cost(s: ListStatement): Promise<number | string> {
    const [text, params] = bound(s);
    if (t.url === null) {
      const sqlite = new Database(join(t.dataDir, 'gateway.sqlite'), { readonly: true });
      try {
        const plan = sqlite.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...params.map(sqliteValue)) as { detail: string }[];
        return plan.map((r) => r.detail).join('\n');
      } finally {
        sqlite.close();
      }
    }
    const conn = await createConnection({ uri: t.url });
    try {
      await conn.query('FLUSH STATUS');
      await conn.query(text, params);
      const [status] = await conn.query("SHOW SESSION STATUS LIKE 'Handler_read%'");
      return (status as { Value: string }[]).reduce((sum, r) => sum + Number(r.Value), 0);
    } finally {
      await conn.end();
    }
  }

  const pageOf = (caller: Caller, search: string, path: SearchPath) =>
    listStatements(t.db.dialect, caller, { search }, 'LAST_UPDATED_DESC', { first: PAGE, after: null }, true, path).page;

  it('reads about a page for a word in half the sessions when it walks, and few rows for a rare word from its matches', async () => {
    expect((await scanned(ADMIN, COMMON, 'LAST_UPDATED_DESC')).length).toBeGreaterThan(SESSIONS * 0.45);
    for (const caller of [ADMIN, MEMBER]) {
      const walked = await cost(pageOf(caller, COMMON, 'walk'));
      const matched = await cost(pageOf(caller, COMMON, 'matches'));
      const rare = await cost(pageOf(caller, RARE, 'matches'));
      if (typeof walked === 'string') {
        // The walk: a seek into the order's index and no sort; the matches drive from the full-text index.
        expect(walked).toMatch(/^SEARCH s USING (COVERING )?INDEX idx_sessions_list_updated \(org_id=\?/);
        expect(walked).not.toMatch(/TEMP B-TREE FOR ORDER BY|SCAN s\b/);
        expect(rare).toMatch(/SCAN agent_session_search VIRTUAL TABLE INDEX/);
        continue;
      }
      // Half the org's sessions match: the page reads about twice what the same page without
      // the search reads (a member's visibility costs participant rows per session either
      // way), where driving from the matches reads every one of them and sorts them.
      const plain = await cost(listStatements(t.db.dialect, caller, {}, 'LAST_UPDATED_DESC', { first: PAGE, after: null }, true).page);
      expect(walked).toBeLessThan(Number(plain) * 3 + 60);
      expect(Number(matched)).toBeGreaterThan(Number(walked) * 3);
      expect(rare).toBeLessThan(PAGE * 4);
    }
  }, 60_000);

  it('probes the matches of a common word no further than the threshold', async () => {
    const probe = searchProbe(t.db.dialect, ADMIN, { search: COMMON }, WALK_AT);
    const [text, params] = bound(probe);
    expect(Number((await t.db.read<{ n: number | string }>(text, params))[0]?.n)).toBe(WALK_AT);
    const reads = await cost(probe);
    if (typeof reads === 'number') expect(reads).toBeLessThan(WALK_AT * 3);
  });
}

/** better-sqlite3 binds no Dates or booleans; the gateway's wrapper binds them as UTC text and 0/1. */
const sqliteValue = (v: SqlValue): string | number | null =>
  v instanceof Date ? v.toISOString().replace('T', ' ').replace('Z', '') : typeof v === 'boolean' ? (v ? 1 : 0) : v;

describe('session search pages on embedded SQLite', () => searchSuite(sqliteTestDatabase));
describeWithMysql('session search pages on MySQL/MariaDB', () => searchSuite(mysqlTestDatabase));
