import { IdempotencyKeys } from '../../src/idempotency/idempotency-keys';
import { mysqlTestDatabase, type TestDatabase } from '../support/db';
import { describeWithMysql } from '../support/services';

/**
 * Found by the crash test (50 executes at once over two instances): claiming new keys at the
 * same time deadlocked on MariaDB (each claim's locking read of a missing row took a gap lock,
 * then each insert waited for the other's), and after the retries the execute was a 500.
 */
describeWithMysql('idempotency keys claimed at once on MySQL/MariaDB', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await mysqlTestDatabase();
  });
  afterAll(() => t.dispose());

  it('are each claimed once, without a deadlock, and a second claim of each sees the first', async () => {
    const keys = new IdempotencyKeys(t.db);
    const until = new Date(Date.now() + 60_000);
    const scopes = Array.from({ length: 60 }, (_, i) => ({ scope: { orgId: 'acme', userId: `user-${i % 6}` }, key: `key-${i}` }));
    const first = await Promise.allSettled(scopes.map(({ scope, key }) => keys.claim(scope, key, `hash-${key}`, until)));
    expect(first.map((r) => (r.status === 'fulfilled' ? r.value.kind : String(r.reason)))).toEqual(scopes.map(() => 'claimed'));
    const again = await Promise.all(scopes.map(({ scope, key }) => keys.claim(scope, key, `hash-${key}`, until)));
    expect(again.map((c) => c.kind)).toEqual(scopes.map(() => 'running'));
    await expect(keys.claim(scopes[0]!.scope, scopes[0]!.key, 'another input', until)).rejects.toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
  }, 60_000);
});
