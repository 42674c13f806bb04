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

function queryCountSuite(database: 'sqlite' | 'mysql'): void {
  let t: TestGateway;

  beforeAll(async () => {
    // The periodic turn sweeper's own queries must not be counted with the request's.
    t = await startGateway({ database, hooks: { sweeper: false } });
    await seedDemoData({ sessions: t.gateway.sessions.lifecycle, contexts: t.gateway.services.contexts }, { orgId: 'acme', orgName: 'Acme', users: 4, sessions: 300, turnsPerSession: 1, randomSeed: 7 });
  }, 120_000);
  afterAll(() => t.close());

  async function statementsFor(query: string, first: number, userId: string, roles: string[]): Promise<string[]> {
    const token = t.token({ userId, roles });
    t.statements.length = 0;
    const res = await t.gql<{ agentSessions: { totalCount: number; edges: { node: Summary }[] } }>(token, query, { first });
    expect(res.body.errors).toBeUndefined();
    const { totalCount, edges } = res.body.data!.agentSessions;
    expect(edges).toHaveLength(first);
    expect(totalCount).toBeGreaterThan(first);
    for (const { node } of edges) {
      expect(node.agentContextName).toBeTruthy();
      expect(node.turnCount).toBe(1);
      expect(node.ownerUser.text).toBe(`User ${node.ownerUser.id.slice('user-'.length)}`);
      expect(node.participants.map((p) => p.id)).toContain(node.ownerUser.id);
    }
    // The live machinery reads the event log in the background (gap catch-up after the
    // seed's concurrent writes, retention pruning); a list query never touches it.
    return t.statements.filter((sql) => !/\b(turn_events|event_counters)\b/.test(sql));
  }

  it.each([
    // page + count + agent contexts + conversation contexts + participants
    ['summaries, owner and participants', 'an admin', SUMMARIES, 'user-1', ['admin'], 5],
    ['summaries, owner and participants', 'a member', SUMMARIES, 'user-2', [], 5],
    // ... + last turns
    ['the last turn as well', 'an admin', WITH_LAST_TURN, 'user-1', ['admin'], 6],
    ['the last turn as well', 'a member', WITH_LAST_TURN, 'user-2', [], 6],
  ])('runs the same statements for 25 and 100 sessions: %s, as %s', async (_what, _who, query, userId, roles, expected) => {
    const page25 = await statementsFor(query, 25, userId, roles);
    const page100 = await statementsFor(query, 100, userId, roles);
    expect(page25).toHaveLength(expected);
    expect(page100).toHaveLength(page25.length);
  });
}

describe('statements per list query on embedded SQLite', () => queryCountSuite('sqlite'));
describeWithMysql('statements per list query on MySQL/MariaDB', () => queryCountSuite('mysql'));
