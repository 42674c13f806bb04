import { describeWithMysql } from '../support/services';
import { alice, bob, eventually, EXECUTE_SETUP, startGateway, type TestGateway } from '../support/testkit';

/** Issue 3 point 9 on MariaDB, including races within one instance and across two. */
describeWithMysql('idempotent execute on MariaDB', () => {
  let h: TestGateway;
  let other: TestGateway;
  beforeAll(async () => {
    h = await startGateway({ ...EXECUTE_SETUP, database: 'mysql', env: { IDEMPOTENCY_WAIT_MS: '8000' } });
    other = await startGateway({ ...EXECUTE_SETUP, peerOf: h, env: { IDEMPOTENCY_WAIT_MS: '300' } });
  });
  afterAll(async () => {
    await other.close();
    await h.close();
  });
  beforeEach(() => {
    h.fake.requests.length = 0;
  });

  const turnCount = async (sessionId: string) => (await h.gateway.services.sessions.getSession(alice, sessionId))?.turnCount;

  it('returns the first result to a retry with the same key and input, with no second turn or provider call', async () => {
    const input = { instruction: 'Idempotent please', idempotencyKey: 'retry-1' };
    const first = await h.execute(alice, input);
    const second = await h.execute(alice, { ...input });
    expect(second.body).toEqual(first.body);
    expect(h.fake.requests).toHaveLength(1);
    expect(await turnCount(first.body.data!.execute.sessionId)).toBe(1);
  });

  it('refuses the same key with a different input (IDEMPOTENCY_KEY_REUSED)', async () => {
    await h.execute(alice, { instruction: 'One thing', idempotencyKey: 'retry-2' });
    const reused = await h.execute(alice, { instruction: 'Another thing', idempotencyKey: 'retry-2' });
    expect(reused.body.errors?.[0]?.extensions).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    const asAsync = await h.executeAsync(alice, { instruction: 'One thing', idempotencyKey: 'retry-2' });
    expect(asAsync.body.errors?.[0]?.extensions?.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(h.fake.requests).toHaveLength(1);
  });

  it('scopes keys to the caller: another user with the same key runs their own call', async () => {
    const a = await h.execute(alice, { instruction: 'Shared key', idempotencyKey: 'retry-3' });
    const b = await h.execute(bob, { instruction: 'Shared key', idempotencyKey: 'retry-3' });
    expect(b.body.data!.execute.turnId).not.toBe(a.body.data!.execute.turnId);
    expect(h.fake.requests).toHaveLength(2);
  });

  it('lets concurrent retries on one instance wait for the first call and share its result', async () => {
    h.fake.enqueue({ kind: 'text', chunks: ['slow ', 'and ', 'single'], delayMs: 200 });
    const input = { instruction: 'Race me', idempotencyKey: 'retry-4' };
    const results = await Promise.all([h.execute(alice, input), h.execute(alice, input), h.execute(alice, input)]);
    const turnIds = new Set(results.map((r) => r.body.data?.execute.turnId));
    expect(turnIds.size).toBe(1);
    expect(results.every((r) => r.body.data?.execute.primaryOutputText === 'slow and single')).toBe(true);
    expect(h.fake.requests).toHaveLength(1);
  });

  it('lets a retry on another instance wait for the first call, or answers CONFLICT once its wait is over', async () => {
    h.fake.enqueue({ kind: 'text', chunks: ['cross', ' instance'], delayMs: 150 });
    const input = { instruction: 'Race across instances', idempotencyKey: 'retry-5' };
    const first = h.execute(alice, input);
    await h.fake.waitForRequests(1);
    const patient = await startGateway({ ...EXECUTE_SETUP, peerOf: h, env: { IDEMPOTENCY_WAIT_MS: '8000' } });
    try {
      const [a, b] = await Promise.all([first, patient.execute(alice, input)]);
      expect(b.body).toEqual(a.body);
      expect(h.fake.requests).toHaveLength(1);
    } finally {
      await patient.close();
    }

    h.fake.enqueue({ kind: 'text', chunks: ['too', ' slow'], delayMs: 1000 });
    const slow = h.execute(alice, { instruction: 'Slow first call', idempotencyKey: 'retry-6' });
    await h.fake.waitForRequests(2);
    const impatient = await other.execute(alice, { instruction: 'Slow first call', idempotencyKey: 'retry-6' });
    expect(impatient.body.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', field: 'idempotencyKey' });
    expect((await slow).body.data?.execute.primaryOutputText).toBe('too slow');
    expect(h.fake.requests).toHaveLength(2);
  });

  it('replays a failed turn as the same error, and lets a retry run again when the first call changed nothing', async () => {
    h.fake.enqueue({ kind: 'http_error', status: 400, message: 'bad request' });
    const failed = await h.execute(alice, { instruction: 'Fails once', idempotencyKey: 'retry-7' });
    const replayed = await h.execute(alice, { instruction: 'Fails once', idempotencyKey: 'retry-7' });
    expect(replayed.body.errors?.[0]).toMatchObject({ message: failed.body.errors?.[0]?.message, extensions: failed.body.errors?.[0]?.extensions });
    expect(h.fake.requests).toHaveLength(1);

    const busy = await startBusySession();
    const refused = await h.execute(alice, { sessionId: busy.sessionId, instruction: 'Try later', idempotencyKey: 'retry-8' });
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('SESSION_BUSY');
    await h.gql(h.tokenOf(alice), 'mutation($s: ID!, $t: ID!) { cancelTurn(sessionId: $s, turnId: $t) { status } }', { s: busy.sessionId, t: busy.turnId });
    const retried = await h.execute(alice, { sessionId: busy.sessionId, instruction: 'Try later', idempotencyKey: 'retry-8' });
    expect(retried.body.data?.execute.kind).toBe('FINAL');
  });

  it('returns the accepted turn to a retried executeAsync without starting a second one', async () => {
    const input = { instruction: 'Async once', idempotencyKey: 'retry-9' };
    const a = await h.executeAsync(alice, input);
    const b = await h.executeAsync(alice, input);
    expect(b.body.data).toEqual(a.body.data);
    await h.waitForTurn(alice, a.body.data!.executeAsync.sessionId, a.body.data!.executeAsync.turnId);
    expect(h.fake.requests).toHaveLength(1);
  });

  async function startBusySession() {
    h.fake.enqueue({ kind: 'stall', chunks: ['working'] });
    const ids = (await h.executeAsync(alice, { instruction: 'Occupy the session' })).body.data!.executeAsync;
    await eventually(() => h.output.of(ids.turnId).text === 'working');
    return ids;
  }
});
