import type { Database } from '../persistence/database';
import { StaleReadError, type SqlValue } from '../persistence/sql';
import { dateOf, jsonOf, nullableDateOf } from '../sessions/raw-values';
import type { WebhookAttemptRecord } from './webhook.entities';
import type { AttemptVerdict } from './webhook-rules';
import type { EndpointSecrets } from './webhook-signing';

/** A delivery this instance holds the lease of, with what sending it needs. */
export interface ClaimedDelivery {
  readonly id: string;
  readonly webhookId: string;
  readonly endpointId: string;
  readonly payload: string;
  readonly attempts: readonly WebhookAttemptRecord[];
  /** Attempts made before this one. */
  readonly attemptCount: number;
  readonly retryUntil: Date;
  readonly url: string;
  readonly secrets: EndpointSecrets;
}

export interface ClaimRequest {
  readonly owner: string;
  readonly now: Date;
  /** Until when the claim holds; another instance takes the delivery up after it (its holder died). */
  readonly leaseUntil: Date;
  /** Rows looked at, at most. */
  readonly limit: number;
  /** Endpoints this instance sends nothing more to right now (their concurrency or rate is spent). */
  readonly skipEndpoints: readonly string[];
  /** How many more deliveries of an endpoint this instance takes now; 0 for none. */
  readonly room: (endpointId: string) => number;
}

/** Attempts kept per delivery (the newest); attemptCount counts them all. */
const KEPT_ATTEMPTS = 50;

interface RawDue {
  readonly id: string;
  readonly webhook_id: string;
  readonly endpoint_id: string;
  readonly payload: string;
  readonly attempts: string | null;
  readonly attempt_count: number | string;
  readonly retry_until: Date | string;
}

interface RawEndpoint {
  readonly id: string;
  readonly url: string;
  readonly secret: string;
  readonly previous_secret: string | null;
  readonly previous_secret_expires_at: Date | string | null;
}

const placeholders = (n: number): string => Array.from({ length: n }, () => '?').join(', ');

/**
 * The outbox as the sender sees it. Every instance claims due deliveries under a lease: on
 * MySQL/MariaDB with `SELECT … FOR UPDATE SKIP LOCKED` (rows another instance is claiming
 * right now are passed over, not waited for), on SQLite inside the one writer's transaction.
 * A claimed delivery's nextAttemptAt moves to the lease's end, so nobody else takes it while
 * its attempt runs; the attempt's result is written only by the lease's holder, and only while
 * the delivery is still as claimed, so each attempt is made and recorded once.
 */
export class WebhookQueue {
  private readonly lock: string;

  constructor(private readonly db: Pick<Database, 'dialect' | 'read' | 'sqlTransaction'>) {
    this.lock = db.dialect === 'sqlite' ? '' : ' FOR UPDATE SKIP LOCKED';
  }

  /** Whether anything may be due: a plain read, so an idle poll takes no lock (and no SQLite write transaction). */
  async anyDue(now: Date): Promise<boolean> {
    const rows = await this.db.read(`SELECT 1 AS due FROM webhook_deliveries WHERE status = 'PENDING' AND next_attempt_at <= ? LIMIT 1`, [now]);
    return rows.length > 0;
  }

  claim(request: ClaimRequest): Promise<ClaimedDelivery[]> {
    const skip = request.skipEndpoints.length > 0 ? ` AND d.endpoint_id NOT IN (${placeholders(request.skipEndpoints.length)})` : '';
    return this.db.sqlTransaction(async (tx) => {
      const due = await tx.rows<RawDue>(
        `SELECT d.id, d.webhook_id, d.endpoint_id, d.payload, d.attempts, d.attempt_count, d.retry_until FROM webhook_deliveries d
  WHERE d.status = 'PENDING' AND d.next_attempt_at <= ?${skip}
    AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = d.endpoint_id AND e.enabled = ?)
  ORDER BY d.next_attempt_at LIMIT ?${this.lock}`,
        [request.now, ...request.skipEndpoints, true, request.limit],
      );
      const taken = new Map<string, number>();
      const chosen = due.filter((row) => {
        const n = taken.get(row.endpoint_id) ?? 0;
        if (n >= request.room(row.endpoint_id)) return false;
        taken.set(row.endpoint_id, n + 1);
        return true;
      });
      if (chosen.length === 0) return [];
      const endpointIds = [...taken.keys()];
      const [, endpoints] = await tx.commitWith([
        {
          sql: `UPDATE webhook_deliveries SET lease_owner = ?, next_attempt_at = ? WHERE id IN (${placeholders(chosen.length)})`,
          params: [request.owner, request.leaseUntil, ...chosen.map((r) => r.id)],
        },
        {
          sql: `SELECT id, url, secret, previous_secret, previous_secret_expires_at FROM webhook_endpoints WHERE id IN (${placeholders(endpointIds.length)})`,
          params: endpointIds,
        },
      ]);
      const byId = new Map((endpoints?.rows as RawEndpoint[]).map((e) => [e.id, e]));
      return chosen.flatMap((row): ClaimedDelivery[] => {
        const endpoint = byId.get(row.endpoint_id);
        if (!endpoint) return [];
        return [
          {
            id: row.id,
            webhookId: row.webhook_id,
            endpointId: row.endpoint_id,
            payload: row.payload,
            attempts: jsonOf<WebhookAttemptRecord[]>(row.attempts, []),
            attemptCount: Number(row.attempt_count),
            retryUntil: dateOf(row.retry_until),
            url: endpoint.url,
            secrets: {
              secret: endpoint.secret,
              previousSecret: endpoint.previous_secret,
              previousSecretExpiresAt: nullableDateOf(endpoint.previous_secret_expires_at),
            },
          },
        ];
      });
    });
  }

  /**
   * Records an attempt and what follows it, if this instance still holds the delivery as it
   * claimed it; false when it does not (nothing is written then). A 410 disables the endpoint
   * in the same transaction.
   */
  settle(delivery: ClaimedDelivery, owner: string, attempt: WebhookAttemptRecord, verdict: AttemptVerdict, now: Date): Promise<boolean> {
    const attempts = [...delivery.attempts, attempt].slice(-KEPT_ATTEMPTS);
    const params: SqlValue[] = [
      verdict.status,
      JSON.stringify(attempts),
      delivery.attemptCount + 1,
      verdict.status === 'PENDING' ? verdict.nextAttemptAt : null,
      delivery.id,
      owner,
      delivery.attemptCount,
    ];
    return this.db
      .sqlTransaction((tx) =>
        tx.commitWith([
          {
            sql: `UPDATE webhook_deliveries SET status = ?, attempts = ?, attempt_count = ?, next_attempt_at = ?, lease_owner = NULL
  WHERE id = ? AND lease_owner = ? AND attempt_count = ? AND status = 'PENDING'`,
            params,
            mustChangeOneRow: true,
          },
          ...(verdict.status === 'FAILED' && verdict.disableEndpoint
            ? [
                {
                  sql: 'UPDATE webhook_endpoints SET enabled = ?, disabled_reason = ?, updated_date = ? WHERE id = ?',
                  params: [false, 'the receiver answered 410 Gone', now, delivery.endpointId],
                },
              ]
            : []),
        ]),
      )
      .then(
        () => true,
        (e: unknown) => {
          if (e instanceof StaleReadError) return false;
          throw e;
        },
      );
  }

  /** Forgets settled deliveries of events before `before` (WEBHOOK_DELIVERY_RETENTION_DAYS). */
  async prune(before: Date): Promise<void> {
    await this.db.sqlTransaction((tx) =>
      tx.commitWith([{ sql: `DELETE FROM webhook_deliveries WHERE created_date < ? AND status <> 'PENDING'`, params: [before] }]),
    );
  }
}
