import type { IdempotencyKeyStore, IdempotencyScope } from '../../src/idempotency/idempotency.port';
import { alice, bob, mallory } from '../support/testkit/users';

export interface IdempotencySubject {
  readonly keys: IdempotencyKeyStore;
  dispose(): Promise<void>;
}

const scopeOf = (c: { orgId: string; userId: string }): IdempotencyScope => ({ orgId: c.orgId, userId: c.userId });

/** What execute's idempotent calls need of every idempotency key store (idempotency.port.ts). */
export function idempotencyContract(open: () => Promise<IdempotencySubject>): void {
  let subject: IdempotencySubject;
  let keys: IdempotencyKeyStore;
  let n = 0;
  const freshKey = () => `key-${++n}-${Math.random().toString(36).slice(2, 8)}`;
  const runningUntil = () => new Date(Date.now() + 60_000);
  const keepUntil = () => new Date(Date.now() + 3_600_000);

  beforeAll(async () => {
    subject = await open();
    keys = subject.keys;
  });
  afterAll(() => subject.dispose());

  it('lets one call claim a key; a retry sees it running, then receives its outcome', async () => {
    const key = freshKey();
    const me = scopeOf(alice);
    expect(await keys.claim(me, key, 'hash-a', runningUntil())).toEqual({ kind: 'claimed' });
    expect(await keys.claim(me, key, 'hash-a', runningUntil())).toEqual({ kind: 'running' });
    await keys.finish(me, key, '{"answer":42}', null, keepUntil());
    expect(await keys.claim(me, key, 'hash-a', runningUntil())).toEqual({ kind: 'done', outcome: '{"answer":42}' });
  });

  it('refuses the same key with another input as IDEMPOTENCY_KEY_REUSED, keeping the first outcome', async () => {
    const key = freshKey();
    const me = scopeOf(alice);
    await keys.claim(me, key, 'hash-a', runningUntil());
    await expect(keys.claim(me, key, 'hash-b', runningUntil())).rejects.toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    await keys.finish(me, key, 'first', null, keepUntil());
    await expect(keys.claim(me, key, 'hash-b', runningUntil())).rejects.toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    expect(await keys.claim(me, key, 'hash-a', runningUntil())).toEqual({ kind: 'done', outcome: 'first' });
  });

  it("keeps each caller's keys apart: the same key from another user or org is another key", async () => {
    const key = freshKey();
    expect(await keys.claim(scopeOf(alice), key, 'hash-a', runningUntil())).toEqual({ kind: 'claimed' });
    expect(await keys.claim(scopeOf(bob), key, 'hash-b', runningUntil())).toEqual({ kind: 'claimed' });
    expect(await keys.claim(scopeOf(mallory), key, 'hash-c', runningUntil())).toEqual({ kind: 'claimed' });
  });

  it('lets a retry run afresh once the first call released the key', async () => {
    const key = freshKey();
    const me = scopeOf(alice);
    await keys.claim(me, key, 'hash-a', runningUntil());
    await keys.release(me, key);
    expect(await keys.claim(me, key, 'hash-b', runningUntil())).toEqual({ kind: 'claimed' });
  });

  it('gives exactly one of many concurrent first calls the claim', async () => {
    const key = freshKey();
    const claims = await Promise.all(Array.from({ length: 10 }, () => keys.claim(scopeOf(alice), key, 'hash-a', runningUntil())));
    expect(claims.filter((c) => c.kind === 'claimed')).toHaveLength(1);
    expect(claims.filter((c) => c.kind === 'running')).toHaveLength(9);
  });
}
