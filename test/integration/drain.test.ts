import { describeWithMysql } from '../support/services';
import { alice, eventually, EXECUTE_SETUP, startGateway, type TestGateway } from '../support/testkit';

/** Issue 40 point 4: what a stopping instance does with the turns it runs, new executes and its readiness. */
describeWithMysql('draining a gateway on shutdown (MariaDB)', () => {
  let h: TestGateway;
  beforeAll(async () => {
    h = await startGateway({ ...EXECUTE_SETUP, database: 'mysql' });
  });
  afterAll(() => h.close());

  it('answers /readyz 503 at once, refuses new executes (retryable, landing once elsewhere) and lets a running turn finish', async () => {
    const stopping = await startGateway({ ...EXECUTE_SETUP, peerOf: h, env: { SHUTDOWN_GRACE_MS: '10000' } });
    stopping.fake.enqueue({ kind: 'text', chunks: ['a slow', ' but', ' whole', ' answer'], delayMs: 600 });
    const ids = (await stopping.executeAsync(alice, { instruction: 'Finish me during the drain' })).body.data!.executeAsync;
    await eventually(() => stopping.output.of(ids.turnId).text === 'a slow');

    const closing = stopping.gateway.close();
    const ready = await fetch(`${stopping.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'draining' });
    const input = { instruction: 'Refused while draining', idempotencyKey: 'drain-retry-1' };
    const refused = await stopping.execute(alice, input);
    expect(refused.body.errors?.[0]?.extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });

    await closing;
    expect(await h.turn(alice, ids.sessionId, ids.turnId)).toMatchObject({ status: 'COMPLETED', agentAnswerSummary: 'a slow but whole answer' });

    // The client's retry with the same key, now through the instance that stays: one turn.
    h.fake.enqueue({ kind: 'text', chunks: ['done once'] });
    const first = await h.execute(alice, input);
    const again = await h.execute(alice, input);
    expect(first.body.data?.execute.primaryOutputText).toBe('done once');
    expect(again.body.data?.execute.turnId).toBe(first.body.data?.execute.turnId);
    await stopping.close();
  }, 30_000);

  it('fails a turn still running at the end of the grace as interrupted, never leaving it PENDING', async () => {
    const stopping = await startGateway({ ...EXECUTE_SETUP, peerOf: h, env: { SHUTDOWN_GRACE_MS: '500' } });
    stopping.fake.enqueue({ kind: 'stall', chunks: ['never finished'] });
    const ids = (await stopping.executeAsync(alice, { instruction: 'Outlives the grace' })).body.data!.executeAsync;
    await eventually(() => stopping.output.of(ids.turnId).text === 'never finished');
    const started = Date.now();
    await stopping.close();
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    expect(await h.turn(alice, ids.sessionId, ids.turnId)).toMatchObject({
      status: 'FAILED',
      errors: ['interrupted: the gateway shut down before the model finished answering'],
    });
  }, 30_000);
});
