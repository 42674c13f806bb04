import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { badInput } from '../domain/errors';
import type { TurnStatus } from '../domain/turn-status';
import { isPrivateAddress } from './address-policy';

/** What an endpoint may subscribe to (GraphQL WebhookEventType). */
export const WEBHOOK_EVENT_TYPES = ['TURN_COMPLETED', 'TURN_FAILED', 'TURN_CANCELLED', 'TURN_AWAITING_TOOL_RESULTS', 'SESSION_CREATED'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const WEBHOOK_DELIVERY_STATUSES = ['PENDING', 'SUCCEEDED', 'FAILED'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** An endpoint's events as one integer (bit i = WEBHOOK_EVENT_TYPES[i]), so the outbox can select subscribers in SQL. */
export const maskOf = (events: readonly WebhookEventType[]): number =>
  events.reduce((mask, e) => mask | (1 << WEBHOOK_EVENT_TYPES.indexOf(e)), 0);

export const eventsOf = (mask: number): WebhookEventType[] => WEBHOOK_EVENT_TYPES.filter((_, i) => (mask & (1 << i)) !== 0);

/** The event a turn's new status is, if any: a turn that becomes PENDING is no webhook event. */
export function turnEventOf(status: TurnStatus): WebhookEventType | null {
  switch (status) {
    case 'COMPLETED':
      return 'TURN_COMPLETED';
    case 'FAILED':
      return 'TURN_FAILED';
    case 'CANCELLED':
      return 'TURN_CANCELLED';
    case 'PENDING':
      return null;
  }
}

export const WEBHOOK_LIMITS = { url: 2048, description: 500, events: WEBHOOK_EVENT_TYPES.length } as const;

/** An endpoint as an admin gives it, checked. */
export interface WebhookEndpointInput {
  readonly url: string;
  readonly events: readonly string[];
  readonly description?: string | null;
}

export interface CheckedEndpointInput {
  readonly url: string;
  readonly eventMask: number;
  readonly description: string | null;
}

/** Where an endpoint may point, as configured (see checkEndpointUrl). */
export interface UrlRules {
  /** NODE_ENV=production: https only, localhost included. */
  readonly production: boolean;
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: loopback, private and link-local addresses allowed. */
  readonly allowPrivateNetworks: boolean;
}

export function checkEndpointInput(input: WebhookEndpointInput, rules: UrlRules): CheckedEndpointInput {
  const unknown = input.events.filter((e) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(e));
  if (unknown.length > 0) throw badInput(`unknown webhook events: ${unknown.join(', ')}`, { field: 'events' });
  if (input.events.length === 0) throw badInput('events must name at least one event', { field: 'events' });
  const description = input.description?.trim() || null;
  if (description && description.length > WEBHOOK_LIMITS.description) {
    throw badInput(`description must be at most ${WEBHOOK_LIMITS.description} characters`, { field: 'description' });
  }
  return { url: checkEndpointUrl(input.url, rules).href, eventMask: maskOf(input.events as WebhookEventType[]), description };
}

/**
 * https:// anywhere; http:// only for localhost outside production. A literal address in a
 * private range is refused here already (unless private networks are allowed); a host name is
 * checked after resolution, at every send (webhook-http.ts).
 */
export function checkEndpointUrl(raw: string, rules: UrlRules): URL {
  const text = raw.trim();
  if (text.length > WEBHOOK_LIMITS.url) throw badInput(`url must be at most ${WEBHOOK_LIMITS.url} characters`, { field: 'url' });
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw badInput('url is not a valid URL', { field: 'url' });
  }
  if (url.username || url.password) throw badInput('url must not carry credentials', { field: 'url' });
  if (url.hash) throw badInput('url must not have a fragment', { field: 'url' });
  const local = isLocalhost(url.hostname);
  if (url.protocol === 'http:') {
    if (rules.production) throw badInput('url must be https:// in production', { field: 'url' });
    if (!local) throw badInput('url must be https:// (http:// is allowed for localhost outside production)', { field: 'url' });
  } else if (url.protocol !== 'https:') {
    throw badInput('url must be https://', { field: 'url' });
  }
  const literal = hostAddress(url.hostname);
  if (!rules.allowPrivateNetworks && ((literal && isPrivateAddress(literal)) || local)) {
    throw badInput('url points at a loopback, private, link-local or metadata address (WEBHOOK_ALLOW_PRIVATE_NETWORKS is off)', { field: 'url' });
  }
  return url;
}

/** `localhost`, `*.localhost`, 127.0.0.0/8 and [::1]. */
export function isLocalhost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const literal = hostAddress(host);
  return literal !== null && (literal === '::1' || (isIP(literal) === 4 && literal.startsWith('127.')));
}

/** The address a URL's hostname spells literally (IPv6 without its brackets), else null. */
export function hostAddress(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) ? bare : null;
}

/** Standard Webhooks: a `whsec_` prefix and base64 of 24 random bytes. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

/** Standard Webhooks' webhook-id: one per event, the same on every attempt at it. */
export const newWebhookId = (): string => `msg_${randomBytes(16).toString('hex')}`;

/** Spec of the issue: retries for up to 24 hours. */
export const DEFAULT_WEBHOOK_RETRY_WINDOW_SECONDS = 24 * 3600;

/** How retries are spaced and for how long (WEBHOOK_RETRY_* in config.ts). */
export interface RetryPolicy {
  /** The wait after the first failed attempt; each later wait doubles, up to maxDelayMs. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/** What one attempt came to. */
export type AttemptOutcome =
  | { readonly kind: 'delivered'; readonly statusCode: number }
  /** 5xx, 429, a timeout or a connection error: worth trying again. */
  | { readonly kind: 'retryable'; readonly statusCode: number | null; readonly error: string; readonly retryAfterMs: number | null }
  /** 410 Gone: the receiver asks for no more deliveries; the endpoint is disabled. */
  | { readonly kind: 'gone'; readonly statusCode: 410 }
  /** Anything else (another 4xx, a redirect, a refused address): trying again would not change it. */
  | { readonly kind: 'rejected'; readonly statusCode: number | null; readonly error: string };

/** What follows an attempt. */
export type AttemptVerdict =
  | { readonly status: 'SUCCEEDED' }
  | { readonly status: 'PENDING'; readonly nextAttemptAt: Date }
  | { readonly status: 'FAILED'; readonly disableEndpoint: boolean };

/**
 * After attempt number `attempt` (1 = the first): exponential backoff from baseDelayMs, each
 * wait between half and all of the doubled delay (jitter spreads receivers' recoveries), at
 * least what Retry-After asked for; no attempt after the delivery's window has closed.
 */
export function verdictOf(
  outcome: AttemptOutcome,
  attempt: number,
  retryUntil: Date,
  now: Date,
  policy: RetryPolicy,
  random: () => number = Math.random,
): AttemptVerdict {
  switch (outcome.kind) {
    case 'delivered':
      return { status: 'SUCCEEDED' };
    case 'gone':
      return { status: 'FAILED', disableEndpoint: true };
    case 'rejected':
      return { status: 'FAILED', disableEndpoint: false };
    case 'retryable': {
      const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(attempt - 1, 30));
      const wait = Math.max(backoff * (0.5 + random() * 0.5), outcome.retryAfterMs ?? 0);
      const next = new Date(now.getTime() + Math.round(wait));
      if (next.getTime() > retryUntil.getTime()) return { status: 'FAILED', disableEndpoint: false };
      return { status: 'PENDING', nextAttemptAt: next };
    }
  }
}

/** Retry-After as seconds or an HTTP date, in milliseconds from `now`; null when absent or unreadable. */
export function retryAfterMs(header: string | undefined, now: Date): number | null {
  if (!header) return null;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now.getTime());
}
