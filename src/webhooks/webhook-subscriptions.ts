import type { Logger } from '../logger.port';
import type { Database } from '../persistence/database';

/**
 * How long what this instance read of an org's endpoints is trusted. Changes made on this
 * instance are seen at once (`changed`); an endpoint created or enabled on another instance
 * sharing the database is seen here within this long, and until then this instance writes no
 * delivery of that org for it (docs/ARCHITECTURE.md, the outbox under "Turn flow").
 */
export const SUBSCRIPTIONS_TTL_MS = 5_000;
/** Orgs remembered at most; past it the memory starts over (each org then costs one read again). */
const MAX_ORGS = 10_000;

const EVENT_MASKS = 'SELECT event_mask FROM webhook_endpoints WHERE org_id = ? AND enabled = ?';

interface Known {
  /** The events some enabled endpoint of the org subscribes to, as one mask (webhook-rules.ts `maskOf`). */
  readonly mask: number;
  readonly until: number;
}

/**
 * Which events each org's enabled endpoints subscribe to, as this instance last read them: the
 * outbox skips building a delivery (its body, its INSERT … SELECT) of an event no endpoint of
 * the org can want, which is every event of an org without endpoints. An org not read yet, or
 * read longer ago than the TTL, may want anything: the outbox writes as if it did (the INSERT
 * … SELECT picks the subscribers itself) and a read starts, so the org's next events know.
 */
export class WebhookSubscriptions {
  private readonly known = new Map<string, Known>();
  private readonly reading = new Set<string>();
  /** Bumped by every local change: a read begun before one does not overwrite what it made unknown. */
  private generation = 0;

  constructor(
    private readonly db: Pick<Database, 'read'>,
    private readonly deps: { readonly logger: Logger; readonly ttlMs?: number; readonly clock?: () => number },
  ) {}

  /** False only when the org is known to have no enabled endpoint subscribed to `eventMask`. */
  mayWant(orgId: string, eventMask: number): boolean {
    const known = this.known.get(orgId);
    if (known && known.until > this.now()) return (known.mask & eventMask) !== 0;
    this.read(orgId);
    return true;
  }

  /** After this instance changed (and committed) an org's endpoints. */
  changed(orgId: string): void {
    this.generation++;
    this.known.delete(orgId);
  }

  private read(orgId: string): void {
    if (this.reading.has(orgId)) return;
    this.reading.add(orgId);
    const generation = this.generation;
    // Trusted from when the read was asked for, not from when it answered.
    const until = this.now() + (this.deps.ttlMs ?? SUBSCRIPTIONS_TTL_MS);
    this.db
      .read<{ event_mask: number | string }>(EVENT_MASKS, [orgId, true])
      .then(
        (rows) => {
          if (generation !== this.generation) return;
          if (this.known.size >= MAX_ORGS) this.known.clear();
          this.known.set(orgId, { mask: rows.reduce((mask, r) => mask | Number(r.event_mask), 0), until });
        },
        // Unknown stays unknown: the outbox goes on writing as if the org wanted everything.
        (e: unknown) => this.deps.logger.warn({ err: e, orgId }, 'reading webhook subscriptions failed'),
      )
      .finally(() => this.reading.delete(orgId));
  }

  private now(): number {
    return this.deps.clock?.() ?? Date.now();
  }
}
