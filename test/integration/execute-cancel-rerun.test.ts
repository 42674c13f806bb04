import { describeWithMysql } from '../support/services';
import { alice, bob, boss, chunk, eventually, EXECUTE_SETUP, mallory, startGateway, type TestGateway } from '../support/testkit';

const CANCEL = `mutation Cancel($sessionId: ID!, $turnId: ID!) {
  cancelTurn(sessionId: $sessionId, turnId: $turnId) { id status agentAnswerSummary fullAgentAnswerUrl warnings }
}`;
const RERUN = `mutation Rerun($sessionId: ID!, $turnId: ID!, $instruction: String) {
  rerunTurn(sessionId: $sessionId, turnId: $turnId, instruction: $instruction) {
    ... on AgentFinalResponse { kind sessionId turnId primaryOutputText }
  }
}`;

interface CancelData {
  cancelTurn: { id: string; status: string; agentAnswerSummary: string | null; fullAgentAnswerUrl: string | null; warnings: string[] };
}

/** Issue 3 point 8 (cancellation, rerun) and the lease side of point 11, on MariaDB. */
describeWithMysql('cancelling and rerunning turns on MariaDB', () => {
  let h: TestGateway;
  beforeAll(async () => {
    h = await startGateway({ ...EXECUTE_SETUP, database: 'mysql', env: { TURN_LEASE_SECONDS: '3' } });
  });
  afterAll(() => h.close());
  beforeEach(() => {
    h.fake.requests.length = 0;
  });

  const cancel = (harness: TestGateway, caller = alice, ids: { sessionId: string; turnId: string }) =>
    harness.gql<CancelData>(harness.tokenOf(caller), CANCEL, ids);

  /** Starts a turn whose provider streams some text, then stalls. */
  async function streaming(harness: TestGateway, text = 'partial answer') {
    harness.fake.enqueue({ kind: 'stall', chunks: [text.slice(0, 8), text.slice(8)] });
    const res = await harness.executeAsync(alice, { instruction: 'Take your time' });
    const ids = res.body.data!.executeAsync;
    await eventually(() => harness.output.of(ids.turnId).text === text);
    return ids;
  }

  it('aborts the provider call, keeps the partial answer in the answer blob and cancels the turn', async () => {
    const ids = await streaming(h);
    const res = await cancel(h, alice, ids);
    expect(res.body.data?.cancelTurn).toMatchObject({ status: 'CANCELLED', agentAnswerSummary: 'partial answer', warnings: ['Cancelled by Name of alice.'] });
    expect((await h.blob(alice, res.body.data!.cancelTurn.fullAgentAnswerUrl!)).text).toBe('partial answer');
    await eventually(() => h.fake.requests[0]?.closedByClient === true);
    expect(h.output.of(ids.turnId).ends).toBe(1);
  });

  it('answers a waiting execute with CANCELLED and the turn it created', async () => {
    h.fake.enqueue({ kind: 'stall', chunks: ['some text'] });
    const waiting = h.execute(alice, { instruction: 'Wait for me' });
    await eventually(() => h.output.deltas.some((d) => d.textDelta === 'some text'));
    const turnId = h.output.deltas.find((d) => d.textDelta === 'some text')!.turnId;
    const sessionId = h.output.deltas.find((d) => d.textDelta === 'some text')!.sessionId;
    await cancel(h, alice, { sessionId, turnId });
    const res = await waiting;
    expect(res.body.errors?.[0]).toMatchObject({ message: 'the turn was cancelled', extensions: { code: 'CANCELLED', sessionId, turnId } });
  });

  it('treats a second cancel as a no-op, a finished turn as CONFLICT, and checks who may cancel', async () => {
    const ids = await streaming(h);
    await cancel(h, alice, ids);
    const again = await cancel(h, alice, ids);
    expect(again.body.errors).toBeUndefined();
    expect(again.body.data?.cancelTurn.status).toBe('CANCELLED');

    const done = (await h.execute(alice, { instruction: 'Finish quickly' })).body.data!.execute;
    const late = await cancel(h, alice, done);
    expect(late.body.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect((await h.turn(alice, done.sessionId, done.turnId)).status).toBe('COMPLETED');

    const running = await streaming(h, 'still running here');
    await h.gateway.sessions.lifecycle.updateSession(alice, running.sessionId, { isPublic: true });
    expect((await cancel(h, bob, running)).body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await cancel(h, mallory, running)).body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await h.turn(alice, running.sessionId, running.turnId)).status).toBe('PENDING');
    expect((await cancel(h, boss, running)).body.data?.cancelTurn.status).toBe('CANCELLED');
  });

  it('cancels a turn that waits for tool results', async () => {
    h.fake.enqueue({ kind: 'tool_calls', calls: [{ name: 'read_file', arguments: '{"path":"x"}' }] });
    const paused = (await h.execute(alice, { conversationContextId: h.conversationContextId, instruction: 'Read x' })).body.data!.execute;
    const res = await cancel(h, alice, paused);
    expect(res.body.data?.cancelTurn).toMatchObject({ status: 'CANCELLED', fullAgentAnswerUrl: null });
  });

  it('stops a call running on another instance: the manager cancels, the running instance aborts at its next lease renewal', async () => {
    const b = await startGateway({ ...EXECUTE_SETUP, peerOf: h, env: { TURN_LEASE_SECONDS: '3' } });
    try {
      h.fake.enqueue({ kind: 'stall', chunks: ['started on A'] });
      const waiting = h.execute(alice, { instruction: 'Run on A' });
      await eventually(() => h.output.deltas.some((d) => d.textDelta === 'started on A'));
      const { sessionId, turnId } = h.output.deltas.find((d) => d.textDelta === 'started on A')!;
      const res = await cancel(b, alice, { sessionId, turnId });
      expect(res.body.data?.cancelTurn.status).toBe('CANCELLED');
      const answer = await waiting;
      expect(answer.body.errors?.[0]?.extensions).toMatchObject({ code: 'CANCELLED', turnId });
      await eventually(() => h.fake.requests.at(-1)?.closedByClient === true);
      // The partial answer is kept, and the cancelled turn gets its URL once the running instance notices.
      const cancelled = await h.waitForTurn(alice, sessionId, turnId, (t) => t.fullAgentAnswerUrl !== null);
      expect(cancelled).toMatchObject({ status: 'CANCELLED', agentAnswerSummary: 'started on A' });
      expect((await b.blob(alice, cancelled.fullAgentAnswerUrl!)).text).toBe('started on A');
      // Spec 003: the tokens the interrupted call spent count, estimated (the stream never reported usage).
      expect(cancelled.usage).toMatchObject({ isEstimated: true, outputTokens: Math.ceil('started on A'.length / 4) });
      expect(cancelled.usage!.inputTokens).toBeGreaterThan(0);
      const session = await h.gql<{ agentSession: { usage: { inputTokens: number; isEstimated: boolean } } }>(
        h.tokenOf(alice),
        'query S($id: ID!) { agentSession(id: $id) { usage { inputTokens isEstimated } } }',
        { id: sessionId },
      );
      expect(session.body.data!.agentSession.usage).toEqual({ inputTokens: cancelled.usage!.inputTokens, isEstimated: true });
    } finally {
      await b.close();
    }
  });

  it('reruns a turn as a NEW turn with the full old instruction, fresh retrieval and file analysis; the old turn is untouched', async () => {
    const instruction = `Explain the module.\n${'context '.repeat(300)}`;
    h.retriever.chunks = [chunk('one')];
    const first = (await h.execute(alice, { instruction, mode: 'edit', activeFiles: [{ path: 'm.ts', content: 'export const m = 1;' }] })).body.data!.execute;
    const before = await h.turn(alice, first.sessionId, first.turnId);
    const retrievals = h.retriever.requests.length;

    h.retriever.chunks = [chunk('one'), chunk('two')];
    const res = await h.gql<{ rerunTurn: { kind: string; sessionId: string; turnId: string } }>(h.tokenOf(alice), RERUN, { sessionId: first.sessionId, turnId: first.turnId });
    const rerun = res.body.data!.rerunTurn;
    expect(rerun.kind).toBe('FINAL');
    expect(rerun.turnId).not.toBe(first.turnId);
    expect(h.retriever.requests.length).toBe(retrievals + 1);
    const fresh = await h.turn(alice, rerun.sessionId, rerun.turnId);
    expect(fresh).toMatchObject({ sequenceNumber: 2, mode: 'edit', status: 'COMPLETED', previousOpenAIResponseId: before.openAIResponseId });
    expect((await h.blob(alice, fresh.fullInstructionUrl!)).text).toBe(instruction.trim());
    expect(fresh.chunkRefs.map((c) => c.chunkId)).toEqual(['one', 'two']);
    // Fresh analysis inside the live chain: the unchanged file is recorded but not re-sent.
    expect(fresh.activeFileRefs).toEqual([{ ...before.activeFileRefs[0], wasSentToLLM: false }]);
    expect(await h.turn(alice, first.sessionId, first.turnId)).toEqual(before);

    const renamed = await h.gql<{ rerunTurn: { turnId: string } }>(h.tokenOf(alice), RERUN, { sessionId: first.sessionId, turnId: first.turnId, instruction: 'Explain it shorter' });
    const third = await h.turn(alice, first.sessionId, renamed.body.data!.rerunTurn.turnId);
    expect(third).toMatchObject({ sequenceNumber: 3, instructionSummary: 'Explain it shorter' });
  });

  it('refuses a second instruction while the session works on a turn (SESSION_BUSY), creating nothing', async () => {
    const ids = await streaming(h, 'busy working now');
    const busy = await h.execute(alice, { sessionId: ids.sessionId, instruction: 'Me too' });
    expect(busy.body.errors?.[0]?.extensions).toMatchObject({ code: 'SESSION_BUSY', sessionId: ids.sessionId });
    const rerun = await h.gql(h.tokenOf(alice), RERUN, ids);
    expect(rerun.body.errors?.[0]?.extensions?.code).toBe('SESSION_BUSY');
    const session = await h.gateway.services.sessions.getSession(alice, ids.sessionId);
    expect(session?.turnCount).toBe(1);
    await cancel(h, alice, ids);
  });

  it('keeps a long call alive by renewing its lease while the sweeper runs', async () => {
    h.fake.enqueue({ kind: 'text', chunks: ['slow', ' but', ' steady', ' answer'], delayMs: 1500 });
    const res = await h.execute(alice, { instruction: 'Slow answer please' });
    expect(res.body.data?.execute.primaryOutputText).toBe('slow but steady answer');
  }, 20_000);

  it('fails a PENDING turn whose instance died once its lease has run out, recording the event', async () => {
    const sessions = h.gateway.sessions.lifecycle;
    const session = await sessions.createSession(alice, { name: 'orphan', agentContextId: h.agentContextId });
    const events: string[] = [];
    const turn = await sessions.addTurn(alice, session.id, { instructionSummary: 'started on a dead instance' }, {
      lease: { owner: 'gw-dead', expiresAt: new Date(Date.now() + 60_000) },
    });
    await h.gateway.orchestrator.sweepExpiredTurns();
    expect((await h.turn(alice, session.id, turn.id)).status).toBe('PENDING');
    h.clock.advance(61_000);
    await h.gateway.orchestrator.sweepExpiredTurns();
    const swept = await h.turn(alice, session.id, turn.id);
    expect(swept).toMatchObject({ status: 'FAILED', errors: ['interrupted: the gateway instance running this turn stopped before it finished'] });
    const rows = await h.gateway.db.dataSource.query<{ previous_status: string | null; status: string }[]>('SELECT previous_status, status FROM turn_events WHERE turn_id = ? ORDER BY id', [turn.id]);
    for (const r of rows) events.push(`${r.previous_status ?? '-'}>${r.status}`);
    expect(events).toEqual(['->PENDING', 'PENDING>FAILED']);
  });
});
