import { EntitySchema } from 'typeorm';
import { jsonColumn } from '../persistence/columns';
import { columnTypes, type Dialect } from '../persistence/dialect';
import type { WebhookDeliveryStatus, WebhookEventType } from './webhook-rules';

/** One attempt at a delivery, as stored in its `attempts` list (GraphQL WebhookAttempt). */
export interface WebhookAttemptRecord {
  /** ISO time the attempt started. */
  readonly at: string;
  readonly statusCode: number | null;
  readonly durationMs: number;
  readonly error: string | null;
}

/** A receiver of one org's webhooks (written by webhook-endpoints.ts only). */
export interface WebhookEndpointRow {
  id: string;
  orgId: string;
  url: string;
  description: string | null;
  /** The subscribed events (webhook-rules.ts maskOf). */
  eventMask: number;
  enabled: boolean;
  /** Why the gateway disabled it (410 Gone); null when enabled, or disabled by an admin. */
  disabledReason: string | null;
  secret: string;
  /** The secret before the last rotation: it signs beside the new one until previousSecretExpiresAt. */
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  createdByUserId: string;
  createdDate: Date;
  updatedDate: Date;
}

/**
 * The outbox: one event for one endpoint, written in the transaction of the change that
 * caused it (webhook-outbox.ts) and sent by any instance (webhook-dispatcher.ts).
 */
export interface WebhookDeliveryRow {
  id: string;
  /** Standard Webhooks' webhook-id: the event's, the same on every attempt and for every endpoint. */
  webhookId: string;
  endpointId: string;
  orgId: string;
  eventType: WebhookEventType;
  sessionId: string | null;
  turnId: string | null;
  /** The JSON body, exactly as signed and sent. */
  payload: string;
  status: WebhookDeliveryStatus;
  attempts: WebhookAttemptRecord[];
  attemptCount: number;
  /** When a PENDING delivery is due (while an instance holds it: when its lease ends); null once settled. */
  nextAttemptAt: Date | null;
  /** The instance sending it now, until nextAttemptAt. */
  leaseOwner: string | null;
  /** No attempt is made after this (WEBHOOK_RETRY_WINDOW_SECONDS from creation, or from a redelivery). */
  retryUntil: Date;
  createdDate: Date;
}

export function webhookEntities(dialect: Dialect) {
  const t = columnTypes(dialect);
  const varchar = (length: number, nullable = false) => ({ type: 'varchar' as const, length, nullable });
  const id = (length: number, nullable = false) => ({ ...varchar(length, nullable), ...t.exactId });
  const date = (name: string, nullable = false) => ({ ...t.datetime, name, nullable });

  const webhookEndpoints = new EntitySchema<WebhookEndpointRow>({
    name: 'WebhookEndpoint',
    tableName: 'webhook_endpoints',
    columns: {
      id: { ...id(36), primary: true },
      orgId: { ...id(64), name: 'org_id' },
      url: varchar(2048),
      description: varchar(500, true),
      eventMask: { type: 'int', name: 'event_mask' },
      enabled: { type: 'boolean', default: true },
      disabledReason: { ...varchar(200, true), name: 'disabled_reason' },
      secret: varchar(100),
      previousSecret: { ...varchar(100, true), name: 'previous_secret' },
      previousSecretExpiresAt: date('previous_secret_expires_at', true),
      createdByUserId: { ...id(64), name: 'created_by_user_id' },
      createdDate: date('created_date'),
      updatedDate: date('updated_date'),
    },
    indices: [{ name: 'idx_webhook_endpoints_org', columns: ['orgId', 'createdDate', 'id'] }],
  });

  const webhookDeliveries = new EntitySchema<WebhookDeliveryRow>({
    name: 'WebhookDelivery',
    tableName: 'webhook_deliveries',
    columns: {
      id: { ...id(36), primary: true },
      webhookId: { ...id(40), name: 'webhook_id' },
      endpointId: { ...id(36), name: 'endpoint_id' },
      orgId: { ...id(64), name: 'org_id' },
      eventType: { ...varchar(40), name: 'event_type' },
      sessionId: { ...id(36, true), name: 'session_id' },
      turnId: { ...id(36, true), name: 'turn_id' },
      payload: { type: t.longText },
      status: varchar(16),
      attempts: { type: t.longText, transformer: jsonColumn<WebhookAttemptRecord[]>([]) },
      attemptCount: { type: 'int', name: 'attempt_count', default: 0 },
      nextAttemptAt: date('next_attempt_at', true),
      leaseOwner: { ...varchar(64, true), name: 'lease_owner' },
      retryUntil: date('retry_until'),
      createdDate: date('created_date'),
    },
    indices: [
      { name: 'idx_webhook_deliveries_due', columns: ['status', 'nextAttemptAt'] },
      { name: 'idx_webhook_deliveries_endpoint', columns: ['endpointId', 'createdDate', 'id'] },
      { name: 'idx_webhook_deliveries_created', columns: ['createdDate'] },
    ],
  });

  return { webhookEndpoints, webhookDeliveries };
}

export type WebhookEntities = ReturnType<typeof webhookEntities>;
