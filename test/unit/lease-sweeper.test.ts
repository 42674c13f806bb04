import type { ExpiredTurn } from '../../src/domain/turn';
import { createLogger } from '../../src/logger';
import { LeaseSweeper } from '../../src/orchestrator/lease-sweeper';

/** A sweeper over a lease table the test fills, whose reads it can hold back. */
function sweeperOver(expired: ExpiredTurn[]) {
  const reads: { release: () => void }[] = [];
  const failed: string[] = [];
  const sweeper = new LeaseSweeper({
    sessions: {
      failExpiredTurn: async (turn) => {
        failed.push(turn.turnId);
        return null;
      },
    },
    leases: {
      // Each pass reads what is expired when it starts, then waits until the test lets it go on.
      expiredTurns: async () => {
        const seen = [...expired];
        await new Promise<void>((release) => reads.push({ release }));
        return seen;
      },
    },
    idempotencyKeys: { purgeExpired: async () => 0 },
    output: { append: () => {}, end: () => {} },
    toolResultTimeoutSeconds: 2,
    logger: createLogger('silent'),
    workingOn: () => false,
  });
  return { sweeper, reads, failed };
}

const turn = (turnId: string): ExpiredTurn => ({ orgId: 'acme', sessionId: 's', turnId, waitingForToolResults: false });
const tick = () => new Promise((r) => setImmediate(r));

describe('lease sweeper', () => {
  it('answers a sweep asked for during a running pass with a pass that starts after it, shared by every such call', async () => {
    const expired: ExpiredTurn[] = [];
    const { sweeper, reads, failed } = sweeperOver(expired);
    const background = sweeper.sweep();
    await tick();
    // The turn expires after the running pass read the leases: only a later pass can see it.
    expired.push(turn('late'));
    const asked = sweeper.sweep();
    const alsoAsked = sweeper.sweep();
    expect(alsoAsked).toBe(asked);
    reads.shift()!.release();
    await background;
    expect(failed).toEqual([]);
    await tick();
    expect(reads).toHaveLength(1);
    reads.shift()!.release();
    await asked;
    expect(failed).toEqual(['late']);
  });
});
