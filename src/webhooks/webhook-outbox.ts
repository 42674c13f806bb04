import type { SessionRecord } from '../domain/session';
import type { TurnRecord } from '../domain/turn';
import type { TurnStatus } from '../domain/turn-status';
import type { Dialect } from '../persistence/dialect';
import type { Statement } from '../persistence/sql';
import { sessionBody, turnBody, type UrlOf, type WebhookBody, type WebhookSession } from './webhook-payload';
import { maskOf, newWebhookId, turnEventOf, type WebhookEventType } from './webhook-rules';
import type { WebhookSubscriptions } from './webhook-subscriptions';

/** A random version-4 UUID made by the database, one per row an INSERT … SELECT writes. */
export const UUID_SQL: Record<Dialect, string> = {
  mysql: 'UUID()',
  mariadb: 'UUID()',
  sqlite: `lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' ||
    substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))`,
};

/** What a change of the session store may be to a webhook. */
export type WebhookTrigger =
  | { readonly kind: 'turn-status'; readonly turn: TurnRecord; readonly previousStatus: TurnStatus | null }
  | { readonly kind: 'awaiting-tool-results'; readonly turn: TurnRecord }
  | {
      readonly kind: 'session-created';
      readonly session: SessionRecord;
      readonly forkedFrom: WebhookSession['forkedFrom'];
    };

/**
 * The outbox's writer: the session store runs `statements(trigger)` inside the transaction of
 * the change, so a delivery exists exactly when the change committed, whatever happens to the
 * instance after the commit. One INSERT … SELECT writes a row per enabled endpoint of the org
 * that subscribes to the event; the sender picks the rows up (webhook-dispatcher.ts). An event
 * no endpoint of the org subscribes to, as `subscriptions` knows them, gets no statement and
 * no body at all (every event of an org without endpoints).
 */
export class WebhookOutbox {
  private readonly insert: string;

  constructor(
    db: { readonly dialect: Dialect },
    private readonly deps: {
      readonly now: () => Date;
      /** No attempt after this long from the event (WEBHOOK_RETRY_WINDOW_SECONDS). */
      readonly retryWindowMs: number;
      readonly url: UrlOf;
      /** Without it every event gets its INSERT … SELECT (which then writes no row for an org without subscribers). */
      readonly subscriptions?: Pick<WebhookSubscriptions, 'mayWant'>;
    },
  ) {
    this.insert = `INSERT INTO webhook_deliveries (id, webhook_id, endpoint_id, org_id, event_type, session_id, turn_id, payload, status,
  attempts, attempt_count, next_attempt_at, lease_owner, retry_until, created_date)
  SELECT ${UUID_SQL[db.dialect]}, ?, e.id, e.org_id, ?, ?, ?, ?, 'PENDING', '[]', 0, ?, NULL, ?, ?
  FROM webhook_endpoints e WHERE e.org_id = ? AND e.enabled = ? AND (e.event_mask & ?) <> 0`;
  }

  /** The statements recording `trigger`'s deliveries; none when it is no webhook event. */
  statements(trigger: WebhookTrigger): Statement[] {
    const type = eventOf(trigger);
    if (!type) return [];
    const orgId = trigger.kind === 'session-created' ? trigger.session.ownerOrganization.id : trigger.turn.orgId;
    if (this.deps.subscriptions && !this.deps.subscriptions.mayWant(orgId, maskOf([type]))) return [];
    const now = this.deps.now();
    const body = this.bodyOf(trigger, type, now);
    const { data } = body;
    return [
      {
        sql: this.insert,
        params: [
          newWebhookId(),
          body.type,
          data.sessionId,
          data.turnId,
          JSON.stringify(body),
          now,
          new Date(now.getTime() + this.deps.retryWindowMs),
          now,
          data.orgId,
          true,
          maskOf([body.type]),
        ],
      },
    ];
  }

  private bodyOf(trigger: WebhookTrigger, type: WebhookEventType, now: Date): WebhookBody {
    switch (trigger.kind) {
      case 'session-created':
        return sessionBody(trigger.session, trigger.forkedFrom);
      case 'awaiting-tool-results':
        return turnBody(type, trigger.turn, now, this.deps.url);
      case 'turn-status':
        return turnBody(type, trigger.turn, trigger.turn.statusTimeStamp, this.deps.url);
    }
  }
}

/** The webhook event `trigger` is, if any. */
function eventOf(trigger: WebhookTrigger): WebhookEventType | null {
  switch (trigger.kind) {
    case 'session-created':
      return 'SESSION_CREATED';
    case 'awaiting-tool-results':
      return 'TURN_AWAITING_TOOL_RESULTS';
    case 'turn-status':
      return trigger.previousStatus === trigger.turn.status ? null : turnEventOf(trigger.turn.status);
  }
}
