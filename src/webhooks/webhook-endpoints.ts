import { randomUUID } from 'node:crypto';
import { In, LessThan, type EntityManager, type FindOptionsWhere } from 'typeorm';
import { isAdmin, type Caller } from '../domain/caller';
import { conflict, forbidden, notFound } from '../domain/errors';
import { assertPageSize, decodeCursor, encodeCursor, malformedCursor, type Page, type PageRequest } from '../domain/pagination';
import type { Database } from '../persistence/database';
import type { WebhookAttemptRecord, WebhookDeliveryRow, WebhookEndpointRow, WebhookEntities } from './webhook.entities';
import {
  checkEndpointInput,
  eventsOf,
  newWebhookSecret,
  type UrlRules,
  type WebhookDeliveryStatus,
  type WebhookEndpointInput,
  type WebhookEventType,
} from './webhook-rules';
import { SECRET_OVERLAP_MS } from './webhook-signing';

/** An endpoint as admins see it: never its secrets. */
export interface WebhookEndpointRecord {
  readonly id: string;
  readonly url: string;
  readonly events: readonly WebhookEventType[];
  readonly description: string | null;
  readonly enabled: boolean;
  readonly disabledReason: string | null;
  readonly createdAt: Date;
}

/** An endpoint and its signing secret: returned by create and rotate only (the secret is shown once). */
export interface WebhookEndpointWithSecret {
  readonly endpoint: WebhookEndpointRecord;
  readonly secret: string;
}

export interface WebhookDeliveryRecord {
  readonly id: string;
  readonly webhookId: string;
  readonly endpointId: string;
  readonly eventType: WebhookEventType;
  readonly status: WebhookDeliveryStatus;
  readonly sessionId: string | null;
  readonly turnId: string | null;
  readonly attempts: readonly WebhookAttemptRecord[];
  readonly nextAttemptAt: Date | null;
  readonly createdAt: Date;
}

const DELIVERY_CURSOR = 'WEBHOOK_DELIVERY';

/**
 * Webhook endpoints of the caller's org, for its admins only (FORBIDDEN for anyone else,
 * before anything is read); an endpoint of another org answers like a missing one.
 */
export class WebhookEndpoints {
  constructor(
    private readonly db: Database<WebhookEntities>,
    private readonly deps: {
      readonly rules: UrlRules;
      readonly now: () => Date;
      /** A redelivery's new retry window (WEBHOOK_RETRY_WINDOW_SECONDS). */
      readonly retryWindowMs: number;
      /** Told when a delivery became due now (a redelivery), so this instance sends it without waiting for its next poll. */
      readonly onDue?: () => void;
      /** Told once a change to an org's endpoints has committed (or failed), so what this instance knows of them is read again. */
      readonly onChanged?: (orgId: string) => void;
    },
  ) {}

  async list(caller: Caller): Promise<WebhookEndpointRecord[]> {
    assertAdmin(caller);
    const rows = await this.db.run((em) =>
      em.find(this.db.entities.webhookEndpoints, {
        where: { orgId: caller.orgId },
        order: { createdDate: 'ASC', id: 'ASC' },
      }),
    );
    return rows.map(toEndpointRecord);
  }

  /**
   * Endpoints and deliveries of the caller's org by id, for `node`/`nodes`: to anyone but an
   * admin there are none (empty, not FORBIDDEN), so the answer says nothing about which ids exist.
   */
  async endpointsByIds(caller: Caller, ids: readonly string[]): Promise<WebhookEndpointRecord[]> {
    if (!isAdmin(caller) || ids.length === 0) return [];
    const rows = await this.db.run((em) => em.find(this.db.entities.webhookEndpoints, { where: { orgId: caller.orgId, id: In([...ids]) } }));
    return rows.map(toEndpointRecord);
  }

  async deliveriesByIds(caller: Caller, ids: readonly string[]): Promise<WebhookDeliveryRecord[]> {
    if (!isAdmin(caller) || ids.length === 0) return [];
    const rows = await this.db.run((em) => em.find(this.db.entities.webhookDeliveries, { where: { orgId: caller.orgId, id: In([...ids]) } }));
    return rows.map(toDeliveryRecord);
  }

  async create(caller: Caller, input: WebhookEndpointInput): Promise<WebhookEndpointWithSecret> {
    assertAdmin(caller);
    const checked = checkEndpointInput(input, this.deps.rules);
    const now = this.deps.now();
    const row: WebhookEndpointRow = {
      id: randomUUID(),
      orgId: caller.orgId,
      url: checked.url,
      description: checked.description,
      eventMask: checked.eventMask,
      enabled: true,
      disabledReason: null,
      secret: newWebhookSecret(),
      previousSecret: null,
      previousSecretExpiresAt: null,
      createdByUserId: caller.userId,
      createdDate: now,
      updatedDate: now,
    };
    await this.changing(caller, () => this.db.transaction((em) => em.insert(this.db.entities.webhookEndpoints, row)));
    return { endpoint: toEndpointRecord(row), secret: row.secret };
  }

  /** Replaces url, events and description; `enabled` (when given) enables or disables it. */
  async update(caller: Caller, id: string, input: WebhookEndpointInput, enabled: boolean | null): Promise<WebhookEndpointRecord> {
    assertAdmin(caller);
    const checked = checkEndpointInput(input, this.deps.rules);
    return this.changing(caller, () => this.db.transaction(async (em) => {
      const row = await this.endpointOf(em, caller, id);
      const next: WebhookEndpointRow = {
        ...row,
        url: checked.url,
        eventMask: checked.eventMask,
        description: checked.description,
        ...(enabled === null ? {} : { enabled, disabledReason: enabled ? null : row.disabledReason }),
        updatedDate: this.deps.now(),
      };
      await em.save(this.db.entities.webhookEndpoints, next);
      return toEndpointRecord(next);
    }));
  }

  /** A new secret; the one it replaces keeps signing beside it for 24 hours (a receiver may verify with either). */
  async rotateSecret(caller: Caller, id: string): Promise<WebhookEndpointWithSecret> {
    assertAdmin(caller);
    return this.db.transaction(async (em) => {
      const row = await this.endpointOf(em, caller, id);
      const now = this.deps.now();
      const next: WebhookEndpointRow = {
        ...row,
        secret: newWebhookSecret(),
        previousSecret: row.secret,
        previousSecretExpiresAt: new Date(now.getTime() + SECRET_OVERLAP_MS),
        updatedDate: now,
      };
      await em.save(this.db.entities.webhookEndpoints, next);
      return { endpoint: toEndpointRecord(next), secret: next.secret };
    });
  }

  /** The endpoint and its deliveries; an attempt running at the time records nothing. */
  async delete(caller: Caller, id: string): Promise<string> {
    assertAdmin(caller);
    await this.changing(caller, () =>
      this.db.transaction(async (em) => {
        const row = await this.endpointOf(em, caller, id);
        await em.delete(this.db.entities.webhookDeliveries, { endpointId: row.id });
        await em.delete(this.db.entities.webhookEndpoints, { id: row.id, orgId: caller.orgId });
      }),
    );
    return id;
  }

  /** An endpoint's deliveries, newest first. */
  async deliveries(caller: Caller, endpointId: string, page: PageRequest): Promise<Page<WebhookDeliveryRecord>> {
    assertAdmin(caller);
    const first = assertPageSize(page.first);
    const after = page.after ? deliveryCursor(page.after) : null;
    const base: FindOptionsWhere<WebhookDeliveryRow> = { endpointId, orgId: caller.orgId };
    const where: FindOptionsWhere<WebhookDeliveryRow>[] = after
      ? [
          { ...base, createdDate: LessThan(after.createdDate) },
          { ...base, createdDate: after.createdDate, id: LessThan(after.id) },
        ]
      : [base];
    const rows = await this.db.run(async (em) => {
      await this.endpointOf(em, caller, endpointId);
      return em.find(this.db.entities.webhookDeliveries, { where, order: { createdDate: 'DESC', id: 'DESC' }, take: first + 1 });
    });
    return {
      items: rows.slice(0, first).map(toDeliveryRecord),
      hasNextPage: rows.length > first,
      cursorOf: (d) => encodeCursor(DELIVERY_CURSOR, { key: d.createdAt.getTime(), id: d.id }),
    };
  }

  /**
   * Sends a delivery again, with the same webhook-id, its attempts so far kept: it is due now
   * and has a new retry window. CONFLICT while an attempt at it is running.
   */
  async redeliver(caller: Caller, deliveryId: string): Promise<WebhookDeliveryRecord> {
    assertAdmin(caller);
    const record = await this.db.transaction(async (em) => {
      const row = await em.findOne(this.db.entities.webhookDeliveries, { where: { id: deliveryId, orgId: caller.orgId } });
      if (!row) throw notFound('webhook delivery');
      const now = this.deps.now();
      if (row.status === 'PENDING' && row.leaseOwner && row.nextAttemptAt && row.nextAttemptAt > now) {
        throw conflict('an attempt at this delivery is running; try again once it has ended');
      }
      const next: WebhookDeliveryRow = { ...row, status: 'PENDING', nextAttemptAt: now, leaseOwner: null, retryUntil: new Date(now.getTime() + this.deps.retryWindowMs) };
      await em.save(this.db.entities.webhookDeliveries, next);
      return toDeliveryRecord(next);
    });
    this.deps.onDue?.();
    return record;
  }

  /** `change` to the caller's org's endpoints; told once it has ended, however it ended (a failed commit may still have landed on MySQL). */
  private async changing<T>(caller: Caller, change: () => Promise<T>): Promise<T> {
    try {
      return await change();
    } finally {
      this.deps.onChanged?.(caller.orgId);
    }
  }

  private async endpointOf(em: EntityManager, caller: Caller, id: string): Promise<WebhookEndpointRow> {
    const row = await em.findOne(this.db.entities.webhookEndpoints, { where: { id, orgId: caller.orgId } });
    if (!row) throw notFound('webhook endpoint');
    return row;
  }
}

function assertAdmin(caller: Caller): void {
  if (!isAdmin(caller)) throw forbidden('only organisation admins manage webhooks');
}

function deliveryCursor(cursor: string): { createdDate: Date; id: string } {
  const { key, id } = decodeCursor(DELIVERY_CURSOR, cursor);
  if (typeof key !== 'number') throw malformedCursor();
  return { createdDate: new Date(key), id };
}

const toEndpointRecord = (row: WebhookEndpointRow): WebhookEndpointRecord => ({
  id: row.id,
  url: row.url,
  events: eventsOf(row.eventMask),
  description: row.description,
  enabled: Boolean(row.enabled),
  disabledReason: row.disabledReason,
  createdAt: row.createdDate,
});

const toDeliveryRecord = (row: WebhookDeliveryRow): WebhookDeliveryRecord => ({
  id: row.id,
  webhookId: row.webhookId,
  endpointId: row.endpointId,
  eventType: row.eventType,
  status: row.status,
  sessionId: row.sessionId,
  turnId: row.turnId,
  attempts: row.attempts,
  nextAttemptAt: row.status === 'PENDING' ? row.nextAttemptAt : null,
  createdAt: row.createdDate,
});
