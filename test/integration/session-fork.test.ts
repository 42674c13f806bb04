import { describeWithMysql } from '../support/services';
import { alice, bob, boss, carol, EXECUTE_SETUP, startGateway, type TestGateway } from '../support/testkit';

const FORK = `mutation F($sessionId: ID!, $turnId: ID!, $name: String) {
  forkAgentSession(sessionId: $sessionId, turnId: $turnId, name: $name) {
    id name turnCount lastTurn { status } ownerUser { id } participants { id } isPublic
    usage { inputTokens outputTokens totalTokens estimatedCostUsd }
    inheritedUsage { inputTokens outputTokens totalTokens estimatedCostUsd }
    forkedFrom { session { id } turn { id sequenceNumber } }
    turns(first: 10) { edges { node { id sequenceNumber status instructionSummary agentAnswerSummary fullAgentAnswerUrl openAIResponseId
      usage { totalTokens } inheritedFrom { session { id } turn { id } } } } }
  }
}`;
const SESSION = `query S($id: ID!) { agentSession(id: $id) {
  id forkedFrom { session { id } } inheritedUsage { totalTokens }
  forks(first: 10) { totalCount edges { node { id name ownerUser { id } } } }
} }`;
const USAGE = `{ usageByDay(days: 1) { days { completedTurns estimatedCostUsd } } }`;

type Input = { role?: string; type?: string; content?: string }[];

interface ForkView {
  id: string;
  name: string;
  turnCount: number;
  lastTurn: { status: string };
  ownerUser: { id: string };
  participants: { id: string }[];
  isPublic: boolean;
  usage: { totalTokens: number; estimatedCostUsd: number | null };
  inheritedUsage: { totalTokens: number; estimatedCostUsd: number | null };
  forkedFrom: { session: { id: string } | null; turn: { id: string; sequenceNumber: number } | null };
  turns: { edges: { node: { id: string; sequenceNumber: number; status: string; instructionSummary: string; agentAnswerSummary: string; fullAgentAnswerUrl: string; openAIResponseId: string; usage: { totalTokens: number }; inheritedFrom: { session: { id: string }; turn: { id: string } } | null } }[] };
}

function forkSuite(database: 'sqlite' | 'mysql'): void {
  let h: TestGateway;
  beforeAll(async () => {
    h = await startGateway({ ...EXECUTE_SETUP, database, env: { OPENAI_CHAIN_TTL_SECONDS: '3600' } });
  });
  afterAll(() => h?.close());

  async function run(caller: typeof alice, input: Record<string, unknown>) {
    const res = await h.execute(caller, input);
    expect(res.body.errors).toBeUndefined();
    return res.body.data!.execute;
  }
  async function threeTurns(caller = alice) {
    const first = await run(caller, { instruction: 'First: the plan', sessionName: 'source', activeFiles: [{ path: 'a.ts', content: 'export const a = 1;' }] });
    const second = await run(caller, { sessionId: first.sessionId, instruction: 'Second: the details' });
    const third = await run(caller, { sessionId: first.sessionId, instruction: 'Third: a detour' });
    return { sessionId: first.sessionId, turns: [first.turnId, second.turnId, third.turnId] };
  }
  const fork = (caller: typeof alice, variables: Record<string, unknown>) => h.gql<{ forkAgentSession: ForkView }>(h.tokenOf(caller), FORK, variables);

  it('copies the turns up to the fork point into a session of the caller, usage inherited rather than counted again', async () => {
    const source = await threeTurns();
    const usageBefore = (await h.gql<{ usageByDay: { days: { completedTurns: number; estimatedCostUsd: number }[] } }>(h.tokenOf(boss), USAGE)).body.data!.usageByDay.days.at(-1)!;
    const originals = await Promise.all(source.turns.map((t) => h.turn(alice, source.sessionId, t)));
    const res = await fork(alice, { sessionId: source.sessionId, turnId: source.turns[1], name: 'Try another way' });
    expect(res.body.errors).toBeUndefined();
    const forked = res.body.data!.forkAgentSession;
    expect(forked).toMatchObject({ name: 'Try another way', turnCount: 2, lastTurn: { status: 'COMPLETED' }, ownerUser: { id: 'alice' }, participants: [{ id: 'alice' }], isPublic: false });
    expect(forked.id).not.toBe(source.sessionId);
    expect(forked.forkedFrom).toEqual({ session: { id: source.sessionId }, turn: { id: source.turns[1], sequenceNumber: 2 } });
    const copies = forked.turns.edges.map((e) => e.node);
    expect(copies.map((c) => c.sequenceNumber)).toEqual([1, 2]);
    copies.forEach((copy, i) => {
      const original = originals[i]!;
      expect(copy.id).not.toBe(original.id);
      expect(copy).toMatchObject({
        status: 'COMPLETED',
        instructionSummary: original.instructionSummary,
        agentAnswerSummary: original.agentAnswerSummary,
        fullAgentAnswerUrl: original.fullAgentAnswerUrl,
        openAIResponseId: original.openAIResponseId,
        usage: { totalTokens: original.usage!.totalTokens },
        inheritedFrom: { session: { id: source.sessionId }, turn: { id: original.id } },
      });
    });
    const inherited = originals[0]!.usage!.totalTokens + originals[1]!.usage!.totalTokens;
    expect(forked.usage.totalTokens).toBe(0);
    expect(forked.inheritedUsage.totalTokens).toBe(inherited);
    // The copies' full texts are the source's, readable by the fork's owner.
    expect((await h.blob(alice, copies[1]!.fullAgentAnswerUrl)).status).toBe(200);
    // Nothing was charged again: the org's usage of the day has not moved.
    const usageAfter = (await h.gql<{ usageByDay: { days: { completedTurns: number; estimatedCostUsd: number }[] } }>(h.tokenOf(boss), USAGE)).body.data!.usageByDay.days.at(-1)!;
    expect(usageAfter).toEqual(usageBefore);
    // The source lists its fork; the fork has no forks of its own.
    const listed = await h.gql<{ agentSession: { forks: { totalCount: number; edges: { node: { id: string } }[] } } }>(h.tokenOf(alice), SESSION, { id: source.sessionId });
    expect(listed.body.data!.agentSession.forks).toEqual({ totalCount: 1, edges: [{ node: { id: forked.id, name: 'Try another way', ownerUser: { id: 'alice' } } }] });
  });

  it("continues the fork point's provider response on the fork's next execute: the model sees exactly the history up to it", async () => {
    const source = await threeTurns();
    const atFork = await h.turn(alice, source.sessionId, source.turns[1]!);
    const forked = (await fork(alice, { sessionId: source.sessionId, turnId: source.turns[1] })).body.data!.forkAgentSession;
    expect(forked.name).toBe('source (fork)');
    h.fake.requests.length = 0;
    const next = await run(alice, { sessionId: forked.id, instruction: 'Instead: the alternative' });
    expect(h.fake.requests).toHaveLength(1);
    const body = h.fake.requests[0]!.body;
    expect(body.previous_response_id).toBe(atFork.openAIResponseId);
    expect((body.input as Input).map((i) => i.role ?? i.type)).toEqual(['user']);
    const turn = await h.turn(alice, forked.id, next.turnId);
    expect(turn).toMatchObject({ sequenceNumber: 3, previousOpenAIResponseId: atFork.openAIResponseId, conversationId: atFork.conversationId });
    // The source goes on from its own last turn, untouched.
    h.fake.requests.length = 0;
    await run(alice, { sessionId: source.sessionId, instruction: 'Back in the source' });
    expect(h.fake.requests[0]!.body.previous_response_id).toBe((await h.turn(alice, source.sessionId, source.turns[2]!)).openAIResponseId);
    // Only the fork's own turn counts in its usage.
    const after = await h.gql<{ agentSession: { inheritedUsage: { totalTokens: number } } }>(h.tokenOf(alice), SESSION, { id: forked.id });
    expect(after.body.data!.agentSession.inheritedUsage.totalTokens).toBe(forked.inheritedUsage.totalTokens);
  });

  it("preloads a new chain from the copied history once the fork point's chain has expired", async () => {
    const source = await threeTurns();
    const forked = (await fork(alice, { sessionId: source.sessionId, turnId: source.turns[1] })).body.data!.forkAgentSession;
    h.clock.advance(2 * 3600 * 1000);
    try {
      h.fake.requests.length = 0;
      const next = await run(alice, { sessionId: forked.id, instruction: 'After a long pause' });
      const body = h.fake.requests[0]!.body;
      expect(body).not.toHaveProperty('previous_response_id');
      const input = body.input as Input;
      expect(input.map((i) => i.role ?? i.type)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
      // The full texts of the copied exchanges, read where the source stored them.
      expect(input[0]!.content).toBe('First: the plan');
      expect(input[2]!.content).toBe('Second: the details');
      expect(input[1]!.content).toContain('Answer to: ');
      expect(JSON.stringify(input)).not.toContain('Third: a detour');
      // The active file the source held is sent again from the fork's own file store.
      expect(input[4]!.content).toContain('After a long pause');
      expect(input[4]!.content).toContain('export const a = 1;');
      const reason = await h.gql<{ agentSessionTurn: { openAIChainRestartReason: string } }>(h.tokenOf(alice), 'query T($s: ID!, $t: ID!) { agentSessionTurn(sessionId: $s, turnId: $t) { openAIChainRestartReason } }', {
        s: forked.id,
        t: next.turnId,
      });
      expect(reason.body.data!.agentSessionTurn.openAIChainRestartReason).toBe('EXPIRED');
    } finally {
      h.clock.advance(-2 * 3600 * 1000);
    }
  });

  it('lets only readers of the session fork it, from a finished turn, and the fork is theirs alone', async () => {
    const source = await threeTurns();
    const before = (await h.gql<{ agentSession: { forks: { totalCount: number } } }>(h.tokenOf(alice), SESSION, { id: source.sessionId })).body.data!.agentSession.forks.totalCount;
    for (const [caller, variables, code] of [
      [bob, { sessionId: source.sessionId, turnId: source.turns[0] }, 'NOT_FOUND'],
      [alice, { sessionId: source.sessionId, turnId: 'no-such-turn' }, 'NOT_FOUND'],
      [alice, { sessionId: 'no-such-session', turnId: source.turns[0] }, 'NOT_FOUND'],
      [alice, { sessionId: source.sessionId, turnId: source.turns[0], name: '   ' }, 'BAD_USER_INPUT'],
    ] as const) {
      const res = await fork(caller, variables);
      expect([caller.userId, res.body.errors?.[0]?.extensions?.code]).toEqual([caller.userId, code]);
    }
    // A turn still running cannot be forked from.
    const pending = await h.gateway.sessions.lifecycle.addTurn(alice, source.sessionId, { instructionSummary: 'still thinking' });
    const refused = await fork(alice, { sessionId: source.sessionId, turnId: pending.id });
    expect(refused.body.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', turnStatus: 'PENDING' });
    await h.gateway.sessions.lifecycle.failTurn(alice, source.sessionId, pending.id, { errors: ['stopped by the test'] });
    expect((await h.gql<{ agentSession: { forks: { totalCount: number } } }>(h.tokenOf(alice), SESSION, { id: source.sessionId })).body.data!.agentSession.forks.totalCount).toBe(before);

    // Public: any member may fork it; the fork is private to them, and its lineage shows for the source's readers only.
    await h.gql(h.tokenOf(alice), 'mutation P($id: ID!) { updateAgentSession(id: $id, patch: { isPublic: true }) { id } }', { id: source.sessionId });
    const bobs = await fork(bob, { sessionId: source.sessionId, turnId: source.turns[2] });
    expect(bobs.body.errors).toBeUndefined();
    expect(bobs.body.data!.forkAgentSession).toMatchObject({ ownerUser: { id: 'bob' }, participants: [{ id: 'bob' }], isPublic: false, turnCount: 3 });
    const bobsFork = bobs.body.data!.forkAgentSession.id;
    expect((await h.gql<{ agentSession: unknown }>(h.tokenOf(carol), SESSION, { id: bobsFork })).body.data!.agentSession).toBeNull();
    const seenByAlice = await h.gql<{ agentSession: { forks: { edges: { node: { id: string } }[] } } }>(h.tokenOf(alice), SESSION, { id: source.sessionId });
    expect(seenByAlice.body.data!.agentSession.forks.edges.map((e) => e.node.id)).not.toContain(bobsFork);
    const seenByBoss = await h.gql<{ agentSession: { forks: { edges: { node: { id: string } }[] } } }>(h.tokenOf(boss), SESSION, { id: source.sessionId });
    expect(seenByBoss.body.data!.agentSession.forks.edges.map((e) => e.node.id)).toContain(bobsFork);
  });
}

describe('forking a session on embedded SQLite', () => forkSuite('sqlite'));
describeWithMysql('forking a session on MySQL/MariaDB', () => forkSuite('mysql'));
