import { seedDemoData } from '../../src/cli/seed-data';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { describeWithMysql } from '../support/services';

const LIST = `query($first: Int!) {
  agentSessions(first: $first) {
    totalCount
    edges { node {
      id name agentContextName conversationContextName lastTurnStatus
      lastTurn { id status sequenceNumber createdByUser { id text } }
      participants { id text }
    } }
  }
}`;

function queryCountSuite(mysql: boolean): void {
  let t: TestGateway;

  beforeAll(async () => {
    // The periodic turn sweeper's own queries must not be counted with the request's.
    t = await startTestGateway({ mysql, hooks: { sweeper: false } });
    await seedDemoData({ sessions: t.gateway.sessions.lifecycle, contexts: t.gateway.services.contexts }, { orgId: 'acme', orgName: 'Acme', users: 4, sessions: 300, turnsPerSession: 1, randomSeed: 7 });
  }, 120_000);
  afterAll(() => t.close());

  async function statementsFor(first: number, userId: string, roles: string[]): Promise<string[]> {
    const token = t.token({ userId, roles });
    t.statements.length = 0;
    const res = await t.gql<{ agentSessions: { edges: { node: { agentContextName: string; participants: unknown[] } }[] } }>(
      token,
      LIST,
      { first },
    );
    expect(res.body.errors).toBeUndefined();
    const edges = res.body.data!.agentSessions.edges;
    expect(edges).toHaveLength(first);
    expect(edges.every((e) => e.node.agentContextName && e.node.participants.length > 0)).toBe(true);
    // The live machinery reads the event log in the background (gap catch-up after the
    // seed's concurrent writes, retention pruning); a list query never touches it.
    return t.statements.filter((sql) => !/\b(turn_events|event_counters)\b/.test(sql));
  }

  it.each([
    ['an admin', 'user-1', ['admin']],
    ['a member', 'user-2', []],
  ])('runs the same small number of statements for 5 and 100 sessions, as %s', async (_who, userId, roles) => {
    const five = await statementsFor(5, userId, roles);
    const hundred = await statementsFor(100, userId, roles);
    // page + count + agent contexts + conversation contexts + last turns + participants
    expect(five).toHaveLength(6);
    expect(hundred).toHaveLength(five.length);
  });
}

describe('statements per list query on embedded SQLite', () => queryCountSuite(false));
describeWithMysql('statements per list query on MySQL/MariaDB', () => queryCountSuite(true));
