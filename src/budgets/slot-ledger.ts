/**
 * Who holds which in-flight slots: one ledger entry per running provider round, keyed by
 * user. Entries carry an expiry that the holder renews, so the slots of an instance that
 * died lapse by themselves (the same rule as turn leases).
 */
export interface SlotLedger {
  /** Adds `slotId` to `key` unless it already holds `max` live slots; false when full. */
  hold(key: string, slotId: string, max: number, ttlMs: number): Promise<boolean>;
  /** Pushes the expiry of slots still held here. */
  renew(slots: readonly { readonly key: string; readonly slotId: string }[], ttlMs: number): Promise<void>;
  release(key: string, slotId: string): Promise<void>;
  close(): Promise<void>;
}

/** The ledger of one instance (no REDIS_URL), and the fallback while Redis is unreachable. */
export class MemorySlotLedger implements SlotLedger {
  private readonly slots = new Map<string, Map<string, number>>();

  constructor(private readonly now: () => number = Date.now) {}

  async hold(key: string, slotId: string, max: number, ttlMs: number): Promise<boolean> {
    const held = this.live(key);
    if (!held.has(slotId) && held.size >= max) return false;
    held.set(slotId, this.now() + ttlMs);
    this.slots.set(key, held);
    return true;
  }

  async renew(slots: readonly { readonly key: string; readonly slotId: string }[], ttlMs: number): Promise<void> {
    for (const { key, slotId } of slots) {
      const held = this.slots.get(key);
      if (held?.has(slotId)) held.set(slotId, this.now() + ttlMs);
    }
  }

  async release(key: string, slotId: string): Promise<void> {
    const held = this.slots.get(key);
    held?.delete(slotId);
    if (held?.size === 0) this.slots.delete(key);
  }

  async close(): Promise<void> {
    this.slots.clear();
  }

  private live(key: string): Map<string, number> {
    const held = this.slots.get(key) ?? new Map<string, number>();
    const now = this.now();
    for (const [slotId, expiresAt] of held) if (expiresAt <= now) held.delete(slotId);
    return held;
  }
}
