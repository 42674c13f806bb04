import { bulkSeedSessions } from '../../src/cli/bulk-seed';
import { seedDemoData } from '../../src/cli/seed-data';
import { ContextDirectory } from '../../src/contexts/context-directory';
import type { Caller } from '../../src/domain/caller';
import type { ListPageRequest } from '../../src/domain/pagination';
import { matchesSearch, searchWords } from '../../src/domain/search-words';
import type { SessionOrder } from '../../src/domain/session';
import type { SqlValue } from '../../src/persistence/sql';
import { listStatements, readList, SessionList, type ListStatement, type SearchWalkLimits } from '../../src/sessions/session-list';
import { paramsOf } from '../../src/sessions/session-query';
import { SEARCH_COUNT_CAP, SEARCH_COUNT_ROWS, SEARCH_PROBE_ROWS, SEARCH_WALK_ROWS } from '../../src/sessions/session-search';
import { createSessionStore } from '../../src/sessions/session-store';
import { mysqlTestDatabase, sqliteTestDatabase, type TestDatabase, type TestDatabaseFactory } from '../support/db';
import { describeWithMysql } from '../support/services';
import { statementCosts, type StatementCost } from '../support/statement-costs';
import { user } from '../support/testkit/users';

const ADMIN = user('user-1', 'acme', ['admin']);
const MEMBER = user('user-2');
const SESSIONS = 3_000;
const PAGE = 25;
const DAY = 24 * 3600 * 1000;
/** In the description of half the seeded sessions ("Seeded session about …"). */
const COMMON = 'seeded';
/** In the names of three public sessions only. */
const RARE = 'numbat';
/** Walks shorter than the gateway's, so that a 3,000-session org has more than a walk holds. */
const SHORT: SearchWalkLimits = { rows: 300, countRows: 1_000, probeRows: 20 };
/** Only walks (each to the end of the range), or only the full-text matches. */
const WALK_ONLY: SearchWalkLimits = { rows: 1e9, countRows: 1e9, probeRows: 1e9 };
const MATCHES_ONLY: SearchWalkLimits = { rows: 0, countRows: 0, probeRows: 0 };

/** The gateway's own. */
const SEARCH_LIMITS: SearchWalkLimits = { rows: SEARCH_WALK_ROWS, countRows: SEARCH_COUNT_ROWS, probeRows: SEARCH_PROBE_ROWS };

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
    ['a word in half the sessions', COMMON, SEARCH_LIMITS],
    ['a word in half the sessions, short walks', COMMON, SHORT],
    ['a word in half the sessions, walked only', COMMON, WALK_ONLY],
    ['a word in half the sessions, from the matches only', COMMON, MATCHES_ONLY],
    ['two words, short walks', 'RATE limit', SHORT],
    ['two words, from the matches only', 'RATE limit', MATCHES_ONLY],
    ['a rare word', RARE, SEARCH_LIMITS],
    ['a rare word, walked only', RARE, WALK_ONLY],
    ['a rare word, a walk of a page', RARE, { rows: PAGE, countRows: PAGE, probeRows: 1 }],
  ] as const)('pages forward and back through the same sessions as a full scan: %s', async (_what, search, limits) => {
    const list = new SessionList(t.db, limits);
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
  }, 180_000);

  /** The statements of a first page with its count, as the gateway runs them, each with what it read. */
  const requestCost = (caller: Caller, search: string, limits: SearchWalkLimits): Promise<StatementCost[]> =>
    statementCosts(t.url, t.dataDir, async (run) => {
      const reads = readList(run, t.db.dialect, caller, { search }, 'LAST_UPDATED_DESC', { first: PAGE, after: null }, true, limits);
      await Promise.all([reads.rows, reads.beyond, reads.count()]);
    });


  const fromMatches = (sql: string) => /m\.session_id/.test(sql);

  it('reads no further than its walks for a common word, and only the matches beyond them for a rare one', async () => {
    expect((await scanned(ADMIN, COMMON, 'LAST_UPDATED_DESC')).length).toBeGreaterThan(SESSIONS * 0.45);
    for (const caller of [ADMIN, MEMBER]) {
      const common = await requestCost(caller, COMMON, SHORT);
      const rare = await requestCost(caller, RARE, SHORT);
      // The common word's page never asks the full-text index (its count does on SQLite, where
      // FTS5 stops at the LIMIT); the rare word's does, once its walks found too little.
      expect(common.filter((s) => fromMatches(s.sql))).toHaveLength(t.url === null ? 1 : 0);
      expect(rare.filter((s) => fromMatches(s.sql))).toHaveLength(2);
      if (t.url === null) {
        for (const s of [...common, ...rare]) {
          // Walks seek into the order's index and stop; the matches drive their join. Never the org's rows.
          expect(s.plan).not.toMatch(/SCAN s\b/);
          if (fromMatches(s.sql)) expect(s.plan).toMatch(/^(CO-ROUTINE c\n)?SCAN agent_session_search VIRTUAL TABLE INDEX/);
          else expect(s.plan).toMatch(/^SEARCH s USING (COVERING )?INDEX idx_sessions_list_updated \(org_id=\?/);
          if (!fromMatches(s.sql)) expect(s.plan).not.toMatch(/TEMP B-TREE/);
        }
        continue;
      }
      // A walk reads no more than its bound (twice: the index entry, then the row it tests,
      // and a member's participant row), whatever the org's size; the matches, a few rows each.
      for (const s of common) expect(s.reads).toBeLessThanOrEqual(2 * SHORT.countRows + 60);
      for (const s of rare.filter((x) => fromMatches(x.sql))) expect(s.reads).toBeLessThan(40);
    }
  }, 60_000);
}

describe('session search pages on embedded SQLite', () => searchSuite(sqliteTestDatabase));
describeWithMysql('session search pages on MySQL/MariaDB', () => searchSuite(mysqlTestDatabase));
