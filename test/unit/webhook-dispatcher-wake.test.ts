import { WebhookDispatcher, type DispatcherDeps } from '../../src/webhooks/webhook-dispatcher';

const silent = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A sender over an empty outbox: every pass is one `anyDue` read, counted. */
function senderOverEmptyOutbox(pollIntervalMs: number): { dispatcher: WebhookDispatcher; reads: () => number } {
  let reads = 0;
  const deps: DispatcherDeps = {
    queue: {
      anyDue: () => {
        reads++;
        return Promise.resolve(false);
      },
      claim: () => Promise.resolve([]),
      settle: () => Promise.resolve(true),
      prune: () => Promise.resolve(),
    },
    send: () => Promise.reject(new Error('nothing is due')),
    retry: { baseDelayMs: 1_000, maxDelayMs: 60_000 },
    limits: { endpointConcurrency: 4, endpointRatePerSecond: 0, maxInFlight: 100, pollIntervalMs, leaseMs: 60_000, retentionDays: 7 },
    owner: 'gw-test',
    now: () => new Date(),
    logger: silent,
  };
  return { dispatcher: new WebhookDispatcher(deps), reads: () => reads };
}

describe('the webhook sender woken by turns', () => {
  it('reads the outbox once for a burst of wakes, not once per turn', async () => {
    const { dispatcher, reads } = senderOverEmptyOutbox(60_000);
    dispatcher.start();
    await sleep(150);
    const before = reads();
    // 500 turns changing status in quick succession, as under load.
    for (let i = 0; i < 500; i++) {
      dispatcher.wake();
      if (i % 50 === 0) await sleep(1);
    }
    await sleep(250);
    await dispatcher.stop();
    expect(reads() - before).toBeGreaterThanOrEqual(1);
    expect(reads() - before).toBeLessThanOrEqual(3);
  });

  it('looks at once when woken after a quiet spell', async () => {
    const { dispatcher, reads } = senderOverEmptyOutbox(60_000);
    dispatcher.start();
    await sleep(150);
    const before = reads();
    dispatcher.wake();
    await sleep(5);
    expect(reads()).toBe(before + 1);
    await dispatcher.stop();
  });
});
