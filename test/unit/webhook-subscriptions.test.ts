import { maskOf } from '../../src/webhooks/webhook-rules';
import { WebhookSubscriptions } from '../../src/webhooks/webhook-subscriptions';

const silent = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined };
const COMPLETED = maskOf(['TURN_COMPLETED']);
const CREATED = maskOf(['SESSION_CREATED']);

/** Subscriptions over a table the test fills; each read answers when the test says so. */
function subscriptionsOver(masks: Map<string, number[]>) {
  let clock = 0;
  const reads: { orgId: string; answer: () => void; fail: (e: Error) => void }[] = [];
  const db = {
    read: <R>(_sql: string, params?: readonly unknown[]) =>
      new Promise<R[]>((resolve, reject) => {
        const orgId = String(params?.[0]);
        reads.push({ orgId, answer: () => resolve((masks.get(orgId) ?? []).map((m) => ({ event_mask: m })) as R[]), fail: reject });
      }),
  };
  const subscriptions = new WebhookSubscriptions(db, { logger: silent, ttlMs: 1_000, clock: () => clock });
  const settle = async () => {
    for (const r of reads.splice(0)) r.answer();
    await new Promise((r) => setImmediate(r));
  };
  return { subscriptions, reads, settle, advance: (ms: number) => (clock += ms) };
}

describe('which webhook events an org may want', () => {
  it('wants everything until read, then only what its enabled endpoints subscribe to, reading once per org', async () => {
    const { subscriptions, reads, settle } = subscriptionsOver(new Map([['acme', [COMPLETED]]]));
    expect(subscriptions.mayWant('acme', CREATED)).toBe(true);
    expect(subscriptions.mayWant('acme', CREATED)).toBe(true);
    expect(subscriptions.mayWant('none', COMPLETED)).toBe(true);
    expect(reads.map((r) => r.orgId)).toEqual(['acme', 'none']);
    await settle();
    expect(subscriptions.mayWant('acme', CREATED)).toBe(false);
    expect(subscriptions.mayWant('acme', COMPLETED)).toBe(true);
    expect(subscriptions.mayWant('none', COMPLETED)).toBe(false);
    expect(reads).toHaveLength(0);
  });

  it('reads again after the TTL, so an endpoint created on another instance is seen', async () => {
    const masks = new Map<string, number[]>();
    const { subscriptions, settle, advance } = subscriptionsOver(masks);
    subscriptions.mayWant('acme', COMPLETED);
    await settle();
    expect(subscriptions.mayWant('acme', COMPLETED)).toBe(false);
    masks.set('acme', [COMPLETED]);
    advance(1_001);
    expect(subscriptions.mayWant('acme', COMPLETED)).toBe(true);
    await settle();
    expect(subscriptions.mayWant('acme', COMPLETED)).toBe(true);
  });

  it('forgets an org changed here at once, and keeps no answer of a read begun before the change', async () => {
    const masks = new Map<string, number[]>();
    const { subscriptions, reads, settle } = subscriptionsOver(masks);
    subscriptions.mayWant('acme', COMPLETED);
    await settle();
    expect(subscriptions.mayWant('acme', COMPLETED)).toBe(false);
    // A read begun, then an endpoint created here; the read answers what it saw before.
    subscriptions.changed('acme');
    expect(subscriptions.mayWant('acme', COMPLETED)).toBe(true);
    subscriptions.changed('acme');
    masks.set('acme', [COMPLETED]);
    const stale = reads.splice(0);
    masks.delete('acme');
    for (const r of stale) r.answer();
    await new Promise((r) => setImmediate(r));
    masks.set('acme', [COMPLETED]);
    expect(subscriptions.mayWant('acme', COMPLETED)).toBe(true);
    await settle();
    expect(subscriptions.mayWant('acme', COMPLETED)).toBe(true);
  });

  it('keeps wanting everything when the read fails', async () => {
    const { subscriptions, reads } = subscriptionsOver(new Map());
    subscriptions.mayWant('acme', COMPLETED);
    for (const r of reads.splice(0)) r.fail(new Error('database down'));
    await new Promise((r) => setImmediate(r));
    expect(subscriptions.mayWant('acme', COMPLETED)).toBe(true);
    expect(reads).toHaveLength(1);
  });
});
