import type { Caller } from '../../src/domain/caller';
import { DomainError } from '../../src/domain/errors';
import { TurnEventSequencer } from '../../src/events/turn-event-sequencer';
import type { TurnStatusEvent } from '../../src/events/turn-events';
import { EventShares } from '../../src/graphql/live/event-shares';
import { LiveGroup, type SubscriberSink } from '../../src/graphql/live/live-group';
import { LiveSource, type Admission, type LiveSink } from '../../src/graphql/live/live-source';
import type { Loaders } from '../../src/graphql/loaders';
import type { Services } from '../../src/graphql/services';
import { createLogger } from '../../src/logger';
import { sleep, waitUntil } from '../support/ws';
import { alice } from '../support/testkit/users';

const logger = createLogger('silent');
const event = (eventId: number, orgId = 'acme'): TurnStatusEvent => ({
  eventId,
  orgId,
  sessionId: 's',
  turnId: `t${eventId}`,
  sequenceNumber: eventId,
  previousStatus: null,
  status: 'PENDING',
  statusTimeStamp: new Date(0),
  createdByUser: { id: 'u', text: 'U' },
});

class FakeBus {
  statusListener: ((e: TurnStatusEvent) => void) | null = null;
  resyncListener: (() => void) | null = null;
  onTurnStatus(listener: (e: TurnStatusEvent) => void) {
    this.statusListener = listener;
    return () => undefined;
  }
  onResync(listener: () => void) {
    this.resyncListener = listener;
    return () => undefined;
  }
  publish(e: TurnStatusEvent) {
    this.statusListener?.(e);
  }
}

class FakeHistory {
  stored: TurnStatusEvent[] = [];
  reads = 0;
  down = false;
  async latestIds(orgIds?: readonly string[]) {
    if (this.down) throw new Error('database unreachable');
    const byOrg = new Map<string, number>();
    for (const e of this.stored) if (!orgIds || orgIds.includes(e.orgId)) byOrg.set(e.orgId, Math.max(byOrg.get(e.orgId) ?? 0, e.eventId));
    return { byOrg, floor: 0 };
  }
  async range(orgId: string, after: number, through: number, limit: number) {
    this.reads++;
    return this.stored.filter((e) => e.orgId === orgId && e.eventId > after && e.eventId <= through).slice(0, limit);
  }
}

async function sequencer(initial: (number | TurnStatusEvent)[] = []) {
  const bus = new FakeBus();
  const history = new FakeHistory();
  history.stored = initial.map((e) => (typeof e === 'number' ? event(e) : e));
  const seq = new TurnEventSequencer(bus, history, logger, { gapWaitMs: 20 });
  await seq.start();
  const got: number[] = [];
  seq.subscribe('acme', (e) => got.push(e.eventId));
  return { bus, history, seq, got };
}

describe('the status event sequencer', () => {
  it('starts after what is already stored and delivers in id order, once', async () => {
    const { bus, history, got } = await sequencer([1, 2]);
    for (const id of [3, 5, 4, 4, 2, 6]) {
      history.stored.push(event(id));
      bus.publish(event(id));
    }
    expect(got).toEqual([3, 4, 5, 6]);
    expect(history.reads).toBe(0);
  });

  it('reads an event that never arrives from the store after a short wait', async () => {
    const { bus, history, got } = await sequencer();
    history.stored.push(event(1), event(2), event(3));
    bus.publish(event(1));
    bus.publish(event(3));
    expect(got).toEqual([1]);
    await sleep(60);
    expect(got).toEqual([1, 2, 3]);
  });

  it('catches up from the store when the bus reconnects', async () => {
    const { bus, history, got } = await sequencer();
    history.stored.push(event(1), event(2));
    bus.resyncListener?.();
    await sleep(10);
    expect(got).toEqual([1, 2]);
    bus.publish(event(2));
    expect(got).toEqual([1, 2]);
  });

  it('still reads gaps after a reconnect that came while no org was listened to', async () => {
    const bus = new FakeBus();
    const history = new FakeHistory();
    const seq = new TurnEventSequencer(bus, history, logger, { gapWaitMs: 20 });
    await seq.start();
    bus.resyncListener?.();
    await sleep(10);
    const got: number[] = [];
    seq.subscribe('acme', (e) => got.push(e.eventId));
    history.stored.push(event(1), event(2));
    bus.publish(event(2));
    await sleep(60);
    expect(got).toEqual([1, 2]);
  });

  it('keeps trying to catch up while the store is unreachable', async () => {
    const { bus, history, got } = await sequencer();
    history.stored.push(event(1), event(2));
    history.down = true;
    bus.resyncListener?.();
    await sleep(30);
    expect(got).toEqual([]);
    history.down = false;
    await sleep(150);
    expect(got).toEqual([1, 2]);
  });

  it('routes events to the listeners of their org only', async () => {
    const { bus, seq, got } = await sequencer();
    const globex: number[] = [];
    seq.subscribe('globex', (e) => globex.push(e.eventId));
    bus.publish(event(1, 'globex'));
    bus.publish(event(1, 'acme'));
    bus.publish(event(2, 'acme'));
    expect(globex).toEqual([1]);
    expect(got).toEqual([1, 2]);
  });

  it('sequences each org on its own: a gap in one org holds back no other org', async () => {
    const { bus, seq, history, got } = await sequencer([1, 2, event(7, 'globex')]);
    const globex: number[] = [];
    seq.subscribe('globex', (e) => globex.push(e.eventId));
    // Started after globex's 7: its 8 follows at once, while acme's 4 waits for 3.
    history.stored.push(event(3), event(4), event(8, 'globex'));
    bus.publish(event(4));
    bus.publish(event(8, 'globex'));
    expect(globex).toEqual([8]);
    expect(got).toEqual([]);
    await sleep(60);
    expect(got).toEqual([3, 4]);
    expect(globex).toEqual([8]);
  });
});

/** A source whose live events and catch-up the test controls. */
class ScriptedSource extends LiveSource<number> {
  sink: LiveSink<number> | null = null;
  stopped = 0;
  constructor(
    caller: Caller,
    readonly startPosition: number,
    private readonly history: number[],
    private readonly deny: Set<number> = new Set(),
    private readonly replayDelayMs = 1,
  ) {
    super(caller, { sessions: {}, contexts: {}, live: {} } as unknown as Services);
  }
  async open(sink: LiveSink<number>) {
    this.sink = sink;
    return () => {
      this.stopped++;
    };
  }
  async *catchUp() {
    for (const n of this.history) {
      await sleep(this.replayDelayMs);
      yield n;
    }
  }
  position(n: number) {
    return n;
  }
  async admit(n: number): Promise<Admission> {
    return this.deny.has(n) ? { stop: new DomainError('NOT_FOUND', 'gone') } : 'deliver';
  }
}

/** What a transport does with a subscriber's messages, recorded. */
class RecordingSink implements SubscriberSink {
  readonly got: string[] = [];
  completed = false;
  congested = false;
  readonly flushes: (() => void)[] = [];
  next(payload: Buffer, flushed?: () => void) {
    this.got.push(payload.toString());
    if (flushed) this.flushes.push(flushed);
  }
  complete() {
    this.completed = true;
  }
  async waitFor(count: number) {
    await waitUntil(() => this.got.length >= count || this.completed, 2_000, `${count} messages`);
    return this.got;
  }
}

describe('a live group', () => {
  const failure = (e: DomainError) => Buffer.from(`failed:${e.code}`);
  const results = (transform: (n: number) => string) => async (n: number) => Buffer.from(transform(n));

  it('transforms each event once for all members and hands every member the same payload', async () => {
    let transforms = 0;
    const source = new ScriptedSource(alice, 0, []);
    const group = new LiveGroup<number>(source, results((n) => `r${n} #${++transforms}`), { failure });
    const sinks = [new RecordingSink(), new RecordingSink(), new RecordingSink()];
    for (const sink of sinks) group.join(source, sink);
    await sleep(5);
    source.sink!.next(1);
    source.sink!.next(2);
    for (const sink of sinks) await sink.waitFor(2);
    expect(transforms).toBe(2);
    expect(sinks.map((s) => s.got)).toEqual([0, 1, 2].map(() => ['r1 #1', 'r2 #2']));
  });

  it('gives a late member its catch-up first, then live results without repeating any', async () => {
    const first = new ScriptedSource(alice, 0, []);
    const group = new LiveGroup<number>(first, results((n) => `r${n}`), { failure });
    const early = new RecordingSink();
    group.join(first, early);
    await sleep(5);
    first.sink!.next(1);
    first.sink!.next(2);
    const late = new RecordingSink();
    group.join(new ScriptedSource(alice, 0, [1, 2, 3]), late);
    first.sink!.next(3);
    first.sink!.next(4);
    expect(await late.waitFor(4)).toEqual(['r1', 'r2', 'r3', 'r4']);
    expect(await early.waitFor(4)).toEqual(['r1', 'r2', 'r3', 'r4']);
  });

  it('lets a member leave at once, and stops the source with the last one', async () => {
    const source = new ScriptedSource(alice, 0, []);
    const group = new LiveGroup<number>(source, results((n) => `r${n}`), { failure });
    const staying = new RecordingSink();
    const leaving = new RecordingSink();
    const stays = group.join(source, staying);
    group.join(source, leaving).cancel();
    await sleep(5);
    source.sink!.next(1);
    await staying.waitFor(1);
    expect(leaving.got).toEqual([]);
    expect(leaving.completed).toBe(false);
    stays.cancel();
    expect(group.isClosed).toBe(true);
    expect(source.stopped).toBe(1);
  });

  it('ends every member with the reason when an event may no longer be delivered', async () => {
    const source = new ScriptedSource(alice, 0, [], new Set([2]));
    const group = new LiveGroup<number>(source, results((n) => `r${n}`), { failure });
    const sink = new RecordingSink();
    group.join(source, sink);
    await sleep(5);
    source.sink!.next(1);
    source.sink!.next(2);
    source.sink!.next(3);
    await waitUntil(() => sink.completed);
    expect(sink.got).toEqual(['r1', 'failed:NOT_FOUND']);
    expect(group.isClosed).toBe(true);
  });

  it('stops a member whose catch-up falls too far behind the live stream, without holding up the others', async () => {
    const source = new ScriptedSource(alice, 0, []);
    const group = new LiveGroup<number>(source, results((n) => `r${n}`), { failure, maxHeld: 3 });
    const fast = new RecordingSink();
    group.join(source, fast);
    const slow = new RecordingSink();
    // Its replay takes a millisecond per event: six live events arrive meanwhile.
    group.join(new ScriptedSource(alice, 0, Array.from({ length: 50 }, (_, i) => -50 + i)), slow);
    await sleep(5);
    for (let n = 1; n <= 6; n++) source.sink!.next(n);
    expect(await fast.waitFor(6)).toEqual(['r1', 'r2', 'r3', 'r4', 'r5', 'r6']);
    await waitUntil(() => slow.completed);
    expect(slow.got.at(-1)).toBe('failed:SERVICE_UNAVAILABLE');
    expect(slow.got.filter((r) => /^r[1-6]$/.test(r))).toEqual([]);
    expect(group.size).toBe(1);
  });

  it('sends a replay only as fast as the transport flushes it', async () => {
    const source = new ScriptedSource(alice, 0, [1, 2, 3], new Set(), 0);
    const group = new LiveGroup<number>(source, results((n) => `r${n}`), { failure });
    const sink = new RecordingSink();
    sink.congested = true;
    group.join(source, sink);
    await waitUntil(() => sink.got.length === 1);
    await sleep(20);
    expect(sink.got).toEqual(['r1']);
    sink.flushes.shift()!();
    await waitUntil(() => sink.got.length === 2);
    sink.congested = false;
    sink.flushes.shift()!();
    expect(await sink.waitFor(3)).toEqual(['r1', 'r2', 'r3']);
  });
});

/** Live events that are objects, as the buses' are: what the groups share loaders by. */
interface Delta {
  readonly n: number;
}

/** One gateway's services, as every source of one executor has. */
const services = { sessions: {}, contexts: {}, live: {} } as unknown as Services;

class DeltaSource extends LiveSource<Delta> {
  sink: LiveSink<Delta> | null = null;
  readonly startPosition = 0;
  constructor(caller: Caller) {
    super(caller, services);
  }
  async open(sink: LiveSink<Delta>) {
    this.sink = sink;
    return () => undefined;
  }
  async *catchUp() {}
  position(d: Delta) {
    return d.n;
  }
  async admit(): Promise<Admission> {
    return 'deliver';
  }
}

describe('the loaders the groups of one executor share per live event', () => {
  const failure = (e: DomainError) => Buffer.from(`failed:${e.code}`);

  it("hands every group of one caller the same loaders for an event, and forgets them once each group has processed or dropped it, while the event itself lives on", async () => {
    const shares = new EventShares();
    const used = new Map<number, Set<Loaders>>();
    const transform = async (d: Delta, _caller: Caller, loaders: Loaders) => {
      used.set(d.n, (used.get(d.n) ?? new Set()).add(loaders));
      return Buffer.from(`r${d.n}`);
    };
    const sources = [new DeltaSource(alice), new DeltaSource(alice)];
    const sinks = [new RecordingSink(), new RecordingSink()];
    const members = sources.map((source, i) => new LiveGroup<Delta>(source, transform, { failure, shares }).join(source, sinks[i]!));
    await sleep(5);
    // Kept referenced, as the output buffer keeps a turn's deltas for late joiners.
    const deltas: Delta[] = [{ n: 1 }, { n: 2 }, { n: 3 }];
    for (const d of deltas.slice(0, 2)) for (const source of sources) source.sink!.next(d);
    for (const sink of sinks) expect(await sink.waitFor(2)).toEqual(['r1', 'r2']);
    expect([...used.values()].map((loaders) => loaders.size)).toEqual([1, 1]);
    expect([...used.get(1)!][0]).not.toBe([...used.get(2)!][0]);
    expect(shares.size).toBe(0);

    // A group that closes with the event still queued lets go of it too.
    for (const source of sources) source.sink!.next(deltas[2]!);
    members[0]!.cancel();
    expect(await sinks[1]!.waitFor(3)).toEqual(['r1', 'r2', 'r3']);
    expect(sinks[0]!.got).toEqual(['r1', 'r2']);
    expect(shares.size).toBe(0);
  });
});
