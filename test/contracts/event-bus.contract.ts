import { randomUUID } from 'node:crypto';
import type { EventBus } from '../../src/events/event-bus.port';
import type { TurnStatusEvent } from '../../src/events/turn-events';
import type { TurnOutputDelta, TurnRef } from '../../src/events/turn-output.port';
import { eventually } from '../support/testkit';

/**
 * Two instances of one deployment on the bus under test: what `publisher` publishes,
 * `subscriber` receives (the in-process bus is one instance, so both are the same bus).
 */
export interface EventBusSubject {
  readonly publisher: EventBus;
  readonly subscriber: EventBus;
  dispose(): Promise<void>;
}

const statusEvent = (eventId: number, turn: TurnRef, status: TurnStatusEvent['status']): TurnStatusEvent => ({
  eventId,
  ...turn,
  sequenceNumber: 1,
  previousStatus: status === 'PENDING' ? null : 'PENDING',
  status,
  statusTimeStamp: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)),
  createdByUser: { id: 'alice', text: 'Name of alice' },
});

const newTurn = (): TurnRef => ({ orgId: 'acme', sessionId: randomUUID(), turnId: randomUUID() });

/** What live subscriptions need of every event bus (event-bus.port.ts), on one instance or across instances. */
export function eventBusContract(open: () => Promise<EventBusSubject>): void {
  let publisher: EventBus;
  let subscriber: EventBus;
  let subject: EventBusSubject;

  beforeAll(async () => {
    subject = await open();
    ({ publisher, subscriber } = subject);
    await eventually(async () => {
      try {
        await Promise.all([publisher.check(), subscriber.check()]);
        return true;
      } catch {
        return false;
      }
    });
    // The subscription to status events is in effect once a probe makes it through.
    const probe = newTurn();
    let arrived = false;
    const stop = subscriber.onTurnStatus((e) => {
      arrived ||= e.turnId === probe.turnId;
    });
    await eventually(() => {
      publisher.turnStatusChanged(statusEvent(1, probe, 'PENDING'));
      return arrived;
    });
    stop();
  });
  afterAll(() => subject.dispose());

  it('delivers committed status events to every listener, in publish order, with their dates intact', async () => {
    const turn = newTurn();
    const seen: TurnStatusEvent[][] = [[], []];
    const stops = seen.map((into) => subscriber.onTurnStatus((e) => e.turnId === turn.turnId && into.push(e)));
    const published = [statusEvent(10, turn, 'PENDING'), statusEvent(11, turn, 'COMPLETED')];
    for (const e of published) publisher.turnStatusChanged(e);
    await eventually(() => seen.every((s) => s.length === 2));
    expect(seen).toEqual([published, published]);
    expect(seen[0]![0]!.statusTimeStamp).toBeInstanceOf(Date);
    stops.forEach((stop) => stop());
  });

  it('stops delivering to a listener that unsubscribed', async () => {
    const turn = newTurn();
    const kept: TurnStatusEvent[] = [];
    const dropped: TurnStatusEvent[] = [];
    const stopKept = subscriber.onTurnStatus((e) => e.turnId === turn.turnId && kept.push(e));
    subscriber.onTurnStatus((e) => e.turnId === turn.turnId && dropped.push(e))();
    publisher.turnStatusChanged(statusEvent(20, turn, 'PENDING'));
    await eventually(() => kept.length === 1);
    expect(dropped).toEqual([]);
    stopKept();
  });

  it('streams text deltas to subscribers of their turn only, and keeps the text so far for late joiners', async () => {
    const turn = newTurn();
    const other = newTurn();
    const received: TurnOutputDelta[] = [];
    const stop = await subscriber.onTurnOutput(turn, (d) => received.push(d));
    const deltas = ['Hel', 'lo, ', 'world'].map((textDelta, index) => ({ ...turn, index, textDelta }));
    for (const d of deltas) publisher.append(d);
    publisher.append({ ...other, index: 0, textDelta: 'not for this turn' });
    await eventually(() => received.length === 3);
    expect(received).toEqual(deltas);
    stop();

    await eventually(async () => (await subscriber.outputSoFar(turn, 0)).length === 3);
    expect(await subscriber.outputSoFar(turn, 1)).toEqual(deltas.slice(1));
    publisher.end(turn);
    await eventually(async () => (await subscriber.outputSoFar(turn, 0)).map((d) => d.textDelta).join('') === 'Hello, world');
    expect(await subscriber.outputSoFar(newTurn(), 0)).toEqual([]);
  });

  it('keeps publishing without throwing when a listener throws', async () => {
    const turn = newTurn();
    const after: TurnStatusEvent[] = [];
    const stops = [
      subscriber.onTurnStatus(() => {
        throw new Error('a broken listener');
      }),
      subscriber.onTurnStatus((e) => e.turnId === turn.turnId && after.push(e)),
    ];
    expect(() => publisher.turnStatusChanged(statusEvent(30, turn, 'PENDING'))).not.toThrow();
    await eventually(() => after.length === 1);
    stops.forEach((stop) => stop());
  });
}
