import type { Caller } from '../../domain/caller';
import { Loaders } from '../loaders';
import type { Services } from '../services';

interface Shared {
  /** Groups that received the event and have not finished with it. */
  holders: number;
  readonly byCaller: Map<string, Loaders>;
}

/**
 * Loaders for one live event and one caller, shared by every group of that caller the event
 * reaches: a user with many subscriptions to the same org (distinct filters, say) costs one
 * read of the event's session per event, not one per subscription (issue 36); the rest of
 * each group's work is its filter, in memory.
 *
 * Kept while a group that received the event has still to process it, and dropped with the
 * last one: not as long as the event object lives. The embedded bus keeps a turn's output
 * deltas a minute after the turn for late joiners, and loaders kept that long, with the
 * records they had read, were most of what the soak's old generation held and then freed.
 * One executor's shares serve one gateway's services, so a caller alone tells loaders apart.
 */
export class EventLoaderShares {
  private readonly shared = new Map<object, Shared>();

  /** A group received `event`: it will ask for loaders, then `release` it once, processed or dropped. */
  hold(event: unknown): void {
    if (!isObject(event)) return;
    const entry = this.shared.get(event);
    if (entry) entry.holders++;
    else this.shared.set(event, { holders: 1, byCaller: new Map() });
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

  /** Events some group has still to process (a leak shows here). */
  get size(): number {
    return this.shared.size;
  }
}

const isObject = (event: unknown): event is object => typeof event === 'object' && event !== null;
