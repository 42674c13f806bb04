import { statementsOf as statementsIn } from '../../src/persistence/mysql-sql';
import { seedDemoData } from '../../src/cli/seed-data';
import { describeWithMysql } from '../support/services';
import { startGateway, type TestGateway } from '../support/testkit';

/** The list view: every summary field, the owner, the participants and the total. */
const SUMMARIES = `query($first: Int!) {
  agentSessions(first: $first) {
    totalCount
    edges { node {
      id name agentContextName conversationContextName lastTurnStatus lastTurnDate turnCount
      ownerUser { id text }
      participants { id text }
    } }
  }
}`;

/** The same without the total. */
const WITHOUT_TOTAL = SUMMARIES.replace('    totalCount\n', '');

/** The same with each session's last turn and its author. */
const WITH_LAST_TURN = SUMMARIES.replace(
  'participants { id text }',
  'participants { id text }\n      lastTurn { id status sequenceNumber createdByUser { id text } }',
);

interface Summary {
  readonly agentContextName: string | null;
  readonly turnCount: number;
  readonly ownerUser: { id: string; text: string };
  readonly participants: { id: string }[];
}

/**
 * Each SQL statement recorded since the last reset. On MySQL, reads asked for together go to
 * the server as one multi-statement query (ReadBatcher); they are counted here one by one.
 */
const statementsOf = (t: TestGateway): string[] => t.statements.flatMap(statementsIn);

function queryCountSuite(database: 'sqlite' | 'mysql'): void {
  let t: TestGateway;

  beforeAll(async () => {
    // The periodic turn sweeper's own queries must not be counted with the request's.
    t = await startGateway({ database, hooks: { sweeper: false, webhookSender: false } });
    await seedDemoData({ sessions: t.gateway.sessions.lifecycle, contexts: t.gateway.services.contexts }, { orgId: 'acme', orgName: 'Acme', users: 4, sessions: 300, turnsPerSession: 1, randomSeed: 7 });
  }, 120_000);
  afterAll(() => t.close());

  async function statementsFor(query: string, first: number, userId: string, roles: string[]): Promise<string[]> {
    const token = t.token({ userId, roles });
    t.statements.length = 0;
    const res = await t.gql<{ agentSessions: { totalCount?: number; edges: { node: Summary }[] } }>(token, query, { first });
    expect(res.body.errors).toBeUndefined();
    const { totalCount, edges } = res.body.data!.agentSessions;
    expect(edges).toHaveLength(first);
    if (query !== WITHOUT_TOTAL) expect(totalCount).toBeGreaterThan(first);
    for (const { node } of edges) {
      expect(node.agentContextName).toBeTruthy();
      expect(node.turnCount).toBe(1);
      expect(node.ownerUser.text).toBe(`User ${node.ownerUser.id.slice('user-'.length)}`);
      expect(node.participants.map((p) => p.id)).toContain(node.ownerUser.id);
    }
    // The live machinery reads the event log in the background (gap catch-up after the
    // seed's concurrent writes, retention pruning); a list query never touches it.
    return statementsOf(t).filter((sql) => !/\b(turn_events|event_counters|org_event_counters)\b/.test(sql));
  }

  it.each([
    // page (context names joined in) + count + participants
    ['summaries, owner and participants', 'an admin', SUMMARIES, 'user-1', ['admin'], 3],
    ['summaries, owner and participants', 'a member', SUMMARIES, 'user-2', [], 3],
    // ... without the count
    ['no totalCount', 'a member', WITHOUT_TOTAL, 'user-2', [], 2],
    // ... + last turns
    ['the last turn as well', 'an admin', WITH_LAST_TURN, 'user-1', ['admin'], 4],
    ['the last turn as well', 'a member', WITH_LAST_TURN, 'user-2', [], 4],
  ])('runs the same statements for 25 and 100 sessions: %s, as %s', async (_what, _who, query, userId, roles, expected) => {
    const page25 = await statementsFor(query, 25, userId, roles);
    const page100 = await statementsFor(query, 100, userId, roles);
    expect(page25).toHaveLength(expected);
    expect(page100).toHaveLength(page25.length);
  });

  it.each(['LAST_UPDATED_DESC', 'LAST_UPDATED_ASC', 'CREATED_DESC', 'NAME_ASC'])(
    'pages through every visible session in %s order, each one once (newest first also in order, and by date)',
    async (orderBy) => {
      const PAGES = `query($orderBy: AgentSessionOrder, $after: String, $filter: AgentSessionFilter) {
        agentSessions(first: 100, orderBy: $orderBy, after: $after, filter: $filter) {
          totalCount pageInfo { hasNextPage endCursor } edges { node { id name lastUpdatedDate } }
        }
      }`;
      type Pages = { agentSessions: { totalCount: number; pageInfo: { hasNextPage: boolean; endCursor: string | null }; edges: { node: { id: string; name: string; lastUpdatedDate: string } }[] } };
      const token = t.token({ userId: 'user-2', roles: [] });
      const seen: { id: string; name: string; lastUpdatedDate: string }[] = [];
      let after: string | null = null;
      let total = 0;
      for (let page = 0; page < 10; page++) {
        const res: { body: { data?: Pages | null; errors?: unknown } } = await t.gql<Pages>(token, PAGES, { orderBy, after });
        expect(res.body.errors).toBeUndefined();
        const list: Pages['agentSessions'] = res.body.data!.agentSessions;
        total = list.totalCount;
        seen.push(...list.edges.map((e) => e.node));
        if (!list.pageInfo.hasNextPage) break;
        after = list.pageInfo.endCursor;
      }
      expect(seen).toHaveLength(total);
      expect(new Set(seen.map((s) => s.id)).size).toBe(total);
      if (orderBy === 'LAST_UPDATED_DESC') {
        const times = seen.map((s) => Date.parse(s.lastUpdatedDate));
        expect(times).toEqual([...times].sort((a, b) => b - a));
        const middle = seen[Math.floor(total / 2)]!.lastUpdatedDate;
        const before = await t.gql<Pages>(token, PAGES, { filter: { updatedBefore: middle } });
        expect(before.body.data!.agentSessions.totalCount).toBe(seen.filter((s) => Date.parse(s.lastUpdatedDate) < Date.parse(middle)).length);
      }
    },
  );

  if (database === 'sqlite') {
    it.each(['LAST_UPDATED_DESC', 'LAST_UPDATED_ASC', 'CREATED_DESC', 'NAME_ASC'])(
      'walks the %s index for a page rather than sorting every session, also once SQLite has statistics',
      async (orderBy) => {
        // ANALYZE (or PRAGMA optimize) learns that every session is in one org: a plan that
        // leaned on org_id alone would then scan and sort the whole table.
        await t.gateway.db.dataSource.query('ANALYZE');
        const token = t.token({ userId: 'user-2', roles: [] });
        t.statements.length = 0;
        const res = await t.gql(token, `query($orderBy: AgentSessionOrder) { agentSessions(first: 25, orderBy: $orderBy) { edges { node { id } } } }`, { orderBy });
        expect(res.body.errors).toBeUndefined();
        const page = statementsOf(t).find((sql) => /\bLIMIT 26\b/.test(sql));
        expect(page).toBeDefined();
        const plan = await t.gateway.db.dataSource.query<{ detail: string }[]>(`EXPLAIN QUERY PLAN ${page}`, ['acme', 'user-2', 'acme', 'user-2']);
        const steps = plan.map((p) => p.detail).join(' | ');
        expect(steps).toMatch(/SEARCH s USING INDEX idx_sessions_list_(updated|created|name)/);
        expect(steps).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
      },
    );
  }

  it("counts a member's sessions from the counters and their own participations, not from the org's sessions, also once the database has statistics", async () => {
    await t.gateway.db.dataSource.query(database === 'sqlite' ? 'ANALYZE' : 'ANALYZE TABLE agent_sessions');
    const token = t.token({ userId: 'user-2', roles: [] });
    t.statements.length = 0;
    const res = await t.gql(token, '{ agentSessions(first: 25) { totalCount edges { node { id } } } }');
    expect(res.body.errors).toBeUndefined();
    const count = statementsOf(t).find((sql) => /\bagent_session_counts\b/.test(sql));
    expect(count).toBeDefined();
    const params = ['acme', 'user-2', 'acme', 'user-2', 'acme', 'user-2'];
    if (database === 'sqlite') {
      const plan = await t.gateway.db.dataSource.query<{ detail: string }[]>(`EXPLAIN QUERY PLAN ${count}`, params);
      const steps = plan.map((p) => p.detail).join(' | ');
      expect(steps).toMatch(/SEARCH cp USING (COVERING )?INDEX idx_participants_list_\w+/);
      expect(steps).toMatch(/SEARCH cs USING INDEX sqlite_autoindex_agent_sessions_1 \(id=\?\)/);
      expect(steps).not.toMatch(/SCAN (cs|cp)\b/);
    } else {
      const plan = await t.gateway.db.dataSource.query<{ table: string; key: string | null; type: string }[]>(`EXPLAIN ${count}`, params);
      expect(plan.find((step) => step.table === 'cp')?.key).toMatch(/^idx_participants_list_\w+$/);
      expect(plan.find((step) => step.table === 'cs')?.type).toBe('eq_ref');
      expect(plan.find((step) => step.table === 'agent_session_counts')?.type).not.toBe('ALL');
    }
  });

  if (database === 'mysql') {
    it("looks a member's participations up by (org, user) for the page, not by scanning that index", async () => {
      const token = t.token({ userId: 'user-2', roles: [] });
      t.statements.length = 0;
      const res = await t.gql(token, '{ agentSessions(first: 25) { totalCount edges { node { id } } } }');
      expect(res.body.errors).toBeUndefined();
      const list = statementsOf(t).filter((sql) => /\bagent_sessions s\b/.test(sql));
      expect(list).toHaveLength(1);
      for (const sql of list) {
        const plan = await t.gateway.db.dataSource.query<{ table: string; type: string }[]>(`EXPLAIN ${sql}`, ['acme', 'user-2', 'acme', 'user-2']);
        expect(plan.find((step) => step.table === 'vp')?.type).toBe('ref');
      }
    });

    it('sends the page and the count in one round trip', async () => {
      const token = t.token({ userId: 'user-2', roles: [] });
      t.statements.length = 0;
      const res = await t.gql(token, '{ agentSessions(first: 25) { totalCount edges { node { id } } } }');
      expect(res.body.errors).toBeUndefined();
      const trips = t.statements.filter((sql) => /\bagent_sessions s\b/.test(sql));
      expect(trips).toHaveLength(1);
      expect(statementsIn(trips[0]!)).toHaveLength(2);
    });
  }

  it('joins the context names into the page only when they are selected, through fragments too', async () => {
    const token = t.token({ userId: 'user-2', roles: [] });
    const pageOf = async (query: string) => {
      t.statements.length = 0;
      const res = await t.gql<{ agentSessions: { edges: { node: { id: string; agentContextName?: string | null } }[] } }>(token, query);
      expect(res.body.errors).toBeUndefined();
      const statements = statementsOf(t).filter((sql) => !/\b(turn_events|event_counters|org_event_counters)\b/.test(sql));
      return { nodes: res.body.data!.agentSessions.edges.map((e) => e.node), statements };
    };
    const plain = await pageOf('{ agentSessions(first: 25) { edges { node { id name } } } }');
    expect(plain.statements).toHaveLength(1);
    expect(plain.statements[0]).not.toMatch(/\bJOIN\b/i);
    const named = await pageOf(
      'query { agentSessions(first: 25) { edges { ...E } } } fragment E on AgentSessionSummaryEdge { node { id ... on AgentSessionSummary { agentContextName } } }',
    );
    expect(named.statements).toHaveLength(1);
    expect(named.statements[0]).toMatch(/\bJOIN\b/i);
    expect(named.nodes.map((n) => n.id)).toEqual(plain.nodes.map((n) => n.id));
    for (const node of named.nodes) expect(node.agentContextName).toBeTruthy();
  });

  it('counts only when totalCount is selected', async () => {
    const counts = (statements: string[]) => statements.filter((sql) => /COUNT\(/i.test(sql)).length;
    expect(counts(await statementsFor(WITHOUT_TOTAL, 25, 'user-2', []))).toBe(0);
    expect(counts(await statementsFor(SUMMARIES, 25, 'user-2', []))).toBe(1);
  });
}

describe('statements per list query on embedded SQLite', () => queryCountSuite('sqlite'));
describeWithMysql('statements per list query on MySQL/MariaDB', () => queryCountSuite('mysql'));
