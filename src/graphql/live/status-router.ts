import { isParticipantPin, sessionPins } from '../../domain/session-filter';
import type { StatusFeed, StatusRoute } from '../../events/live-feeds';
import type { TurnEventSequencer } from '../../events/turn-event-sequencer';
import type { TurnStatusEvent } from '../../events/turn-events';
import type { Logger } from '../../logger';
import type { FactsReader } from './event-facts';
import type { EventShares } from './event-shares';

type Listener = (event: TurnStatusEvent) => void;

/** A pinned listener and how many events had been received when it subscribed. */
interface Pinned {
  readonly listener: Listener;
  readonly since: number;
}

/** One org's listeners, indexed by route, and its events waiting for their session's pins. */
interface OrgRoutes {
  readonly all: Set<Listener>;
  readonly bySession: Map<string, Set<Listener>>;
  readonly byPin: Map<string, Set<Pinned>>;
  participantPins: number;
  readonly waiting: { readonly event: TurnStatusEvent; readonly seq: number }[];
  draining: boolean;
  readonly stop: () => void;
}

const ORG: StatusRoute = { kind: 'org' };

/**
 * Hands each status event only to the listeners whose route it can match (issue 36.2): a
 * session's listeners are found by the event's session id, filtered feeds by a value their
 * filter pins (owner, context, workspace, repo, participant) looked up among the pins of the
 * event's session, read once per event for all of them; only feeds that pin nothing see every
 * event. A thousand distinct filters that match nothing then cost a few map lookups per
 * event, not a thousand wake-ups each evaluating its filter. One sequencer listener per org.
 *
 * Pinned delivery waits for the session read, org by org in arrival order, so a pinned
 * listener still gets its events in order; a listener only gets events received after it
 * subscribed, as the sequencer would. When the read fails every pinned listener gets the
 * event and decides for itself (its own read fails the same way, and it reports it).
 */
export class StatusRouter implements StatusFeed {
  private readonly orgs = new Map<string, OrgRoutes>();
  private received = 0;

  constructor(
    private readonly sequencer: Pick<TurnEventSequencer, 'subscribe'>,
    private readonly reads: FactsReader,
    private readonly logger: Logger,
    /** The gateway's live groups' shares: the facts read here for the pins serve their filters too. */
    private readonly shares: Pick<EventShares, 'hold' | 'release' | 'facts'>,
  ) {}

  subscribe(orgId: string, listener: Listener, route: StatusRoute = ORG): () => void {
    const org = this.org(orgId);
    if (route.kind === 'org') {
      org.all.add(listener);
      return () => {
        org.all.delete(listener);
        this.release(orgId, org);
      };
    }
    if (route.kind === 'session') return this.add(orgId, org, org.bySession, route.sessionId, listener);
    const pinned: Pinned = { listener, since: this.received };
    if (isParticipantPin(route.pin)) org.participantPins++;
    const unsubscribe = this.add(orgId, org, org.byPin, route.pin, pinned);
    return () => {
      if (isParticipantPin(route.pin) && org.byPin.get(route.pin)?.has(pinned)) org.participantPins--;
      unsubscribe();
    };
  }

  /** Listeners right now, over all orgs and routes (for tests and metrics). */
  get listenerCount(): number {
    let n = 0;
    for (const org of this.orgs.values()) {
      n += org.all.size;
      for (const set of org.bySession.values()) n += set.size;
      for (const set of org.byPin.values()) n += set.size;
    }
    return n;
  }

  private add<T>(orgId: string, org: OrgRoutes, index: Map<string, Set<T>>, key: string, item: T): () => void {
    let set = index.get(key);
    if (!set) index.set(key, (set = new Set()));
    set.add(item);
    return () => {
      const current = index.get(key);
      if (!current?.delete(item)) return;
      if (current.size === 0) index.delete(key);
      this.release(orgId, org);
    };
  }

  private org(orgId: string): OrgRoutes {
    let org = this.orgs.get(orgId);
    if (!org) {
      const created: OrgRoutes = {
        all: new Set(),
        bySession: new Map(),
        byPin: new Map(),
        participantPins: 0,
        waiting: [],
        draining: false,
        stop: this.sequencer.subscribe(orgId, (event) => this.receive(created, event)),
      };
      this.orgs.set(orgId, created);
      org = created;
    }
    return org;
  }

  /** The org's last listener left: its sequencer listener goes too. */
  private release(orgId: string, org: OrgRoutes): void {
    if (org.all.size > 0 || org.bySession.size > 0 || org.byPin.size > 0) return;
    org.stop();
    org.waiting.length = 0;
    if (this.orgs.get(orgId) === org) this.orgs.delete(orgId);
  }

  private receive(org: OrgRoutes, event: TurnStatusEvent): void {
    const seq = ++this.received;
    for (const listener of org.all) this.call(listener, event);
    for (const listener of org.bySession.get(event.sessionId) ?? []) this.call(listener, event);
    if (org.byPin.size === 0) return;
    org.waiting.push({ event, seq });
    if (!org.draining) void this.drain(org);
  }

  /** Pinned delivery: the waiting events' sessions read together, then each event to the listeners of its pins, in order. */
  private async drain(org: OrgRoutes): Promise<void> {
    org.draining = true;
    try {
      while (org.waiting.length > 0) {
        const batch = org.waiting.splice(0);
        const withParticipants = org.participantPins > 0;
        // Held until handed on: the groups it reaches hold it from then on, and reuse its facts.
        for (const { event } of batch) this.shares.hold(event);
        try {
          const pins = await Promise.all(batch.map(({ event }) => this.pinsOf(event, withParticipants)));
          batch.forEach(({ event, seq }, i) => {
            const wanted = pins[i];
            const sets = wanted === null ? [...org.byPin.values()] : [...new Set(wanted)].map((pin) => org.byPin.get(pin));
            for (const set of sets) {
              for (const { listener, since } of set ?? []) if (since < seq) this.call(listener, event);
            }
          });
        } finally {
          for (const { event } of batch) this.shares.release(event);
        }
      }
    } finally {
      org.draining = false;
    }
  }

  /** The pins of the event's session; null when they cannot be read (then every pinned listener decides). */
  private async pinsOf(event: TurnStatusEvent, withParticipants: boolean): Promise<string[] | null> {
    try {
      const facts = await this.shares.facts(event, this.reads);
      if (!facts.session) return [];
      return sessionPins(facts.session, withParticipants ? await facts.participants() : null);
    } catch {
      return null;
    }
  }

  private call(listener: Listener, event: TurnStatusEvent): void {
    try {
      listener(event);
    } catch (e) {
      this.logger.error({ err: e }, 'a status event listener failed');
    }
  }
}
