import type { EntityHeader } from '../../src/domain/caller';
import type { SessionRecord } from '../../src/domain/session';
import { filterPin } from '../../src/domain/session-filter';
import type { TurnStatusEvent } from '../../src/events/turn-events';
import type { FactsReader } from '../../src/graphql/live/event-facts';
import { EventShares } from '../../src/graphql/live/event-shares';
import { StatusRouter } from '../../src/graphql/live/status-router';
import { createLogger } from '../../src/logger';
import { waitUntil } from '../support/ws';

const event = (eventId: number, sessionId: string): TurnStatusEvent => ({
  eventId,
  orgId: 'acme',
  sessionId,
  turnId: `t${eventId}`,
  sequenceNumber: eventId,
  previousStatus: null,
  status: 'PENDING',
  statusTimeStamp: new Date(0),
  createdByUser: { id: 'u', text: 'U' },
});

const session = (id: string, fields: Partial<SessionRecord>): SessionRecord =>
  ({ id, ownerUser: { id: 'owner', text: 'Owner' }, agentContextId: 'ac', conversationContextId: null, workspaceId: null, repo: null, ...fields }) as SessionRecord;

/** The sequencer's side: one listener per org, fed by hand. */
class FakeSequencer {
  readonly listeners = new Map<string, (e: TurnStatusEvent) => void>();
  subscribe(orgId: string, listener: (e: TurnStatusEvent) => void) {
    this.listeners.set(orgId, listener);
    return () => this.listeners.delete(orgId);
  }
  publish(e: TurnStatusEvent) {
    this.listeners.get(e.orgId)?.(e);
  }
}

/** Sessions and participants by id; reads held until `release` when `held`; `failing` makes them throw. */
class FakeReads implements FactsReader {
  sessions = new Map<string, SessionRecord>();
  participants = new Map<string, EntityHeader[]>();
  reads = 0;
  participantReads = 0;
  failing = false;
  held: (() => void)[] | null = null;
  async sessionsInOrg(_scope: { orgId: string }, ids: readonly string[]): Promise<SessionRecord[]> {
    this.reads++;
    if (this.held) await new Promise<void>((r) => this.held!.push(r));
    if (this.failing) throw new Error('database down');
    return ids.flatMap((id) => this.sessions.get(id) ?? []);
  }
  async participantsOf(_scope: { orgId: string }, ids: readonly string[]): Promise<Map<string, EntityHeader[]>> {
    this.participantReads++;
    return new Map(ids.map((id) => [id, this.participants.get(id) ?? []]));
  }
}

function setUp() {
  const sequencer = new FakeSequencer();
  const reads = new FakeReads();
  const shares = new EventShares();
  const router = new StatusRouter(sequencer, reads, createLogger('silent'), shares);
  const feed = (route?: Parameters<StatusRouter['subscribe']>[2]) => {
    const got: number[] = [];
    const stop = router.subscribe('acme', (e) => got.push(e.eventId), route);
    return { got, stop };
  };
  const pinned = (filter: Parameters<typeof filterPin>[0]) => feed({ kind: 'pin', pin: filterPin(filter)! });
  return { sequencer, reads, router, feed, pinned, shares };
}

describe('StatusRouter (issue 36.2)', () => {
  it('hands each event to the org feeds, its session feeds, and the filtered feeds whose pin its session has', async () => {
    const { sequencer, reads, feed, pinned } = setUp();
    reads.sessions.set('s1', session('s1', { repo: 'api', workspaceId: 'w1' }));
    reads.sessions.set('s2', session('s2', { ownerUser: { id: 'bob', text: 'Bob' } }));
    reads.participants.set('s2', [{ id: 'carol', text: 'Carol' }]);
    const org = feed();
    const s1 = feed({ kind: 'session', sessionId: 's1' });
    const repo = pinned({ repo: 'api' });
    const otherRepo = pinned({ repo: 'web' });
    const bob = pinned({ ownerUserId: 'bob' });
    const carol = pinned({ participantId: 'carol' });
    const ownerTakesPart = pinned({ participantId: 'bob' });

    sequencer.publish(event(1, 's1'));
    sequencer.publish(event(2, 's2'));
    await waitUntil(() => bob.got.length === 1);

    expect(org.got).toEqual([1, 2]);
    expect(s1.got).toEqual([1]);
    expect(repo.got).toEqual([1]);
    expect(otherRepo.got).toEqual([]);
    expect(carol.got).toEqual([2]);
    expect(ownerTakesPart.got).toEqual([2]);
    // Each session read once, for every filtered feed.
    expect(reads.reads).toBe(2);
  });

  it('keeps filtered feeds in arrival order while reads are slow, and gives none an event from before it subscribed', async () => {
    const { sequencer, reads, pinned } = setUp();
    reads.sessions.set('s1', session('s1', { repo: 'api' }));
    reads.held = [];
    const early = pinned({ repo: 'api' });
    sequencer.publish(event(1, 's1'));
    const late = pinned({ repo: 'api' });
    sequencer.publish(event(2, 's1'));
    sequencer.publish(event(3, 's1'));
    const held = reads.held;
    reads.held = null;
    await waitUntil(() => held.length > 0);
    held.splice(0).forEach((release) => release());
    await waitUntil(() => early.got.length === 3);
    expect(early.got).toEqual([1, 2, 3]);
    expect(late.got).toEqual([2, 3]);
  });

  it('reads participants only while a feed pins one, and stops listening to the org when the last feed leaves', async () => {
    const { sequencer, reads, pinned } = setUp();
    reads.sessions.set('s1', session('s1', {}));
    const byRepo = pinned({ repo: 'api' });
    sequencer.publish(event(1, 's1'));
    await waitUntil(() => reads.reads === 1);
    expect(reads.participantReads).toBe(0);
    const byParticipant = pinned({ participantId: 'owner' });
    sequencer.publish(event(2, 's1'));
    await waitUntil(() => byParticipant.got.length === 1);
    expect(reads.participantReads).toBe(1);
    byParticipant.stop();
    byRepo.stop();
    expect(sequencer.listeners.size).toBe(0);
  });

  it('hands the event to every filtered feed when its session cannot be read (each then decides, and reports the failure)', async () => {
    const { sequencer, reads, pinned } = setUp();
    reads.failing = true;
    const a = pinned({ repo: 'api' });
    const b = pinned({ ownerUserId: 'bob' });
    sequencer.publish(event(1, 's1'));
    await waitUntil(() => a.got.length === 1 && b.got.length === 1);
  });

  it("shares the session it read for the pins with the groups the event reaches, and keeps it only while one of them has still to process it", async () => {
    const { sequencer, reads, router, shares } = setUp();
    reads.sessions.set('s1', session('s1', { repo: 'api' }));
    const received: TurnStatusEvent[] = [];
    // A live group's part: it holds what it receives until it has processed it.
    router.subscribe(
      'acme',
      (e) => {
        shares.hold(e);
        received.push(e);
      },
      { kind: 'pin', pin: filterPin({ repo: 'api' })! },
    );
    const e1 = event(1, 's1');
    sequencer.publish(e1);
    await waitUntil(() => received.length === 1);
    expect((await shares.facts(e1, reads)).session?.repo).toBe('api');
    expect(reads.reads).toBe(1);
    shares.release(e1);
    expect(shares.size).toBe(0);
    // The event lives on (an output buffer may keep it); its facts do not.
    await shares.facts(e1, reads);
    expect(reads.reads).toBe(2);
  });
});
