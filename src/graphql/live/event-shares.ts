import type { Caller } from '../../domain/caller';
import { Loaders } from '../loaders';
import type { Services } from '../services';
import { readSessionFacts, type FactsReader, type SessionEvent, type SessionFacts, type SharedFacts } from './event-facts';

interface Shared {
  /** The router and the groups that received the event and have not finished with it. */
  holders: number;
  readonly byCaller: Map<string, Loaders>;
  /** The event's session as the org holds it, for every group and the status router. */
  facts: Promise<SessionFacts> | null;
}

/**
 * What one live event's processing reads, shared by everyone it reaches: its session's facts
 * (status-router.ts, `admitViewers`) read once, and loaders per caller, shared by every group of
 * that caller: a user with many subscriptions to the same org (distinct filters, say) costs one
 * read of the event's session per event, not one per subscription (issue 36); the rest of
 * each group's work is its filter, in memory.
 *
 * Kept while the router or a group that received the event has still to process it, and dropped
 * with the last one: not as long as the event object lives. The embedded bus keeps a turn's
 * output deltas a minute after the turn for late joiners, and loaders or facts kept that long,
 * with the records they had read, were much of what the soak's old generation held and then
 * freed (heap snapshots: 5,141 Loaders, then 3,544 sessions' facts).
 * One gateway's shares serve its one set of services, so a caller alone tells loaders apart
 * and an event alone its facts.
 */
export class EventShares implements SharedFacts {
  private readonly shared = new Map<object, Shared>();

  /** The router or a group received `event`: it will ask for loaders or facts, then `release` it once, processed or dropped. */
  hold(event: unknown): void {
    if (!isObject(event)) return;
    const entry = this.shared.get(event);
    if (entry) entry.holders++;
    else this.shared.set(event, { holders: 1, byCaller: new Map(), facts: null });
  }

  release(event: unknown): void {
    if (!isObject(event)) return;
    const entry = this.shared.get(event);
    if (entry && --entry.holders === 0) this.shared.delete(event);
  }

  loaders(event: unknown, caller: Caller, services: Services): Loaders {
    const entry = isObject(event) ? this.shared.get(event) : undefined;
    if (!entry) return new Loaders(caller, services);
    // The caller exactly (org, user, roles): what a loader may return depends on nothing else.
    const key = `${caller.orgId}\n${caller.userId}\n${[...caller.roles].sort().join(',')}`;
    let loaders = entry.byCaller.get(key);
    if (!loaders) entry.byCaller.set(key, (loaders = new Loaders(caller, services)));
    return loaders;
  }

  /** Read once while the event is held; read afresh when it is not. */
  facts(event: SessionEvent, reads: FactsReader): Promise<SessionFacts> {
    const entry = this.shared.get(event);
    if (!entry) return readSessionFacts(event, reads);
    if (!entry.facts) {
      const facts = readSessionFacts(event, reads);
      entry.facts = facts;
      // A failed read is not kept: the next to ask reads again (and fails on its own).
      facts.catch(() => {
        if (entry.facts === facts) entry.facts = null;
      });
    }
    return entry.facts;
  }

  /** Events the router or some group has still to process (a leak shows here). */
  get size(): number {
    return this.shared.size;
  }
}

const isObject = (event: unknown): event is object => typeof event === 'object' && event !== null;
