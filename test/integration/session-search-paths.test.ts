import { createConnection } from 'mysql2/promise';
import { seedDemoData } from '../../src/cli/seed-data';
import { ContextDirectory } from '../../src/contexts/context-directory';
import type { Caller } from '../../src/domain/caller';
import { SessionList, type SearchWalkLimits } from '../../src/sessions/session-list';
import { letterPattern, type TextCollation } from '../../src/sessions/session-search';
import { createSessionStore } from '../../src/sessions/session-store';
import { mysqlTestDatabase, sqliteTestDatabase, type TestDatabase, type TestDatabaseFactory } from '../support/db';
import { describeWithMysql } from '../support/services';
import { admin, alice, bob } from '../support/testkit/users';

/** Only walks of the order's index, each session tested on its own row; or only the full-text matches. */
const WALK_ONLY: SearchWalkLimits = { rows: 1e9, countRows: 1e9, probeRows: 1e9 };
const MATCHES_ONLY: SearchWalkLimits = { rows: 0, countRows: 0, probeRows: 0 };

/** Names and descriptions where the two ways of testing a word could part. */
const TEXTS: readonly (readonly [name: string, description: string | null])[] = [
  ['Café crème', null],
  ['cafe latte', 'Order for the team'],
  ['rate_limiter review', null],
  ["O'Neil report", null],
  ["Lunch at l'école", null],
  ['About the size', 'When and where'],
  ['ÉCOLE straße', null],
  ['Naïve résumé', 'Über uber'],
  ['100% done', 'x-ray of foo.bar and e-mail'],
  ['Ørsted søk', null],
  ['日本語 テスト', null],
  ['MIXED Case WORDS', null],
  ['Plain name', 'Has a Numbat inside'],
  ['seventy_seven%', "it's 50% off"],
  ['Ab cd ef', 'ghi'],
];

/** Searches of those texts: accents either way, case, `_`, `'`, `%`, stopwords, several words, short words. */
const SEARCHES = [
  'cafe', 'café', 'CAFÉ', 'ecole', 'école', 'neil', "o'neil", 'limiter', 'rate_limiter', 'rate', 'about', 'the size',
  'when', 'where and', '100%', '100', 'ray', 'mail', 'bar', 'naive', 'resume', 'uber', 'über', 'stras', 'strasse',
  '日本語', 'テスト', 'mixed words', 'words case', 'numbat inside', 'seven', 'seventy', 'orsted', 'søk', "it's off", 'off 50%',
  'ab ghi', 'quokka',
];

/** Issue 35: the walk and the full-text matches give the same sessions for any search. */
function pathsSuite(open: TestDatabaseFactory): void {
  let t: TestDatabase;
  const boss = admin();

  beforeAll(async () => {
    t = await open();
    const store = createSessionStore({ db: t.db, events: { turnStatusChanged: () => undefined } });
    const demo = await seedDemoData(
      { sessions: store.lifecycle, contexts: new ContextDirectory(t.db) },
      { orgId: 'acme', orgName: 'acme', users: 3, sessions: 2, turnsPerSession: 1, randomSeed: 3 },
    );
    const agentContextId = demo.agentContextIds[0]!;
    // Alice's public sessions, and one private session of Bob's a search must not show her.
    for (const [name, description] of TEXTS) await store.lifecycle.createSession(alice, { name, description, agentContextId, isPublic: true });
    await store.lifecycle.createSession(bob, { name: 'Secret quokka plan', agentContextId, isPublic: false });
  }, 120_000);
  afterAll(() => t.dispose());

  const names = async (caller: Caller, search: string, limits: SearchWalkLimits) => {
    const page = await new SessionList(t.db, limits).list(caller, { search }, 'NAME_ASC', { first: 100, after: null }, { withTotalCount: true });
    return { names: page.items.map((s) => s.name), total: await page.totalCount() };
  };

  it.each(SEARCHES)('finds the same sessions walking as from the matches: %s', async (search) => {
    for (const caller of [boss, alice]) {
      const walked = await names(caller, search, WALK_ONLY);
      expect(walked).toEqual(await names(caller, search, MATCHES_ONLY));
      expect(walked.total).toBe(walked.names.length);
    }
  });

  it('finds words in any case, with or without accents, and after an apostrophe', async () => {
    // Sorted here: the databases order names by different collations.
    const found = async (search: string) => (await names(boss, search, WALK_ONLY)).names.sort();
    expect(await found('cafe')).toEqual(['Café crème', 'cafe latte']);
    expect(await found('CAFÉ')).toEqual(['Café crème', 'cafe latte']);
    expect(await found('ecole')).toEqual(["Lunch at l'école", 'ÉCOLE straße']);
    expect(await found('resume naive')).toEqual(['Naïve résumé']);
    expect(await found('neil')).toEqual(["O'Neil report"]);
    // No stopwords: "about", "the" and "when" are words like any other.
    expect(await found('the size about')).toEqual(['About the size']);
    expect(await found('when')).toEqual(['About the size']);
    expect(await found('ray mail bar')).toEqual(['100% done']);
    expect(await found('テスト')).toEqual(['日本語 テスト']);
  });

  it("shows a member no session she may not read, on either path", async () => {
    for (const limits of [WALK_ONLY, MATCHES_ONLY]) {
      expect((await names(alice, 'quokka', limits)).names).toEqual([]);
      expect((await names(bob, 'quokka', limits)).names).toEqual(['Secret quokka plan']);
    }
  });
}

describe('session search paths on embedded SQLite', () => pathsSuite(sqliteTestDatabase));
describeWithMysql('session search paths on MySQL/MariaDB', () => {
  pathsSuite(mysqlTestDatabase);

  /**
   * The walk's REGEXP gives each Latin letter the accented forms the search table's collation
   * equates with it, no more and no fewer: the server is the judge.
   */
  it.each([
    ['general', 'utf8mb4_general_ci'],
    ['uca', 'utf8mb4_unicode_ci'],
  ] as const)('tests each letter with exactly the forms the collation equates with it: %s', async (collation: TextCollation, name) => {
    const t = await mysqlTestDatabase();
    const conn = await createConnection({ uri: t.url! });
    try {
      const candidates: string[] = [];
      for (const [from, to] of [[0x41, 0x5a], [0x61, 0x7a], [0xc0, 0x24f], [0x1e00, 0x1eff]] as const) {
        for (let cp = from; cp <= to; cp++) candidates.push(String.fromCodePoint(cp));
      }
      for (const letter of 'abcdefghijklmnopqrstuvwxyz') {
        const [rows] = await conn.query(
          `SELECT j.c FROM JSON_TABLE(?, '$[*]' COLUMNS (c VARCHAR(4) CHARACTER SET utf8mb4 PATH '$')) j ` +
            `WHERE (j.c COLLATE ${name} = ?) <> (j.c REGEXP ?)`,
          [JSON.stringify(candidates), letter, `^(?i)${letterPattern(letter, collation)}$`],
        );
        expect({ letter, differ: (rows as { c: string }[]).map((r) => r.c).join('') }).toEqual({ letter, differ: '' });
      }
    } finally {
      await conn.end();
      await t.dispose();
    }
  });
});
