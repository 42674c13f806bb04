import { Webhook } from 'standardwebhooks';

/** How long a rotated-out secret keeps signing beside the new one. */
export const SECRET_OVERLAP_MS = 24 * 3600 * 1000;

/** An endpoint's secrets as stored. */
export interface EndpointSecrets {
  readonly secret: string;
  readonly previousSecret: string | null;
  readonly previousSecretExpiresAt: Date | null;
}

/**
 * Standard Webhooks headers for one attempt: the event's webhook-id (the same on every
 * retry), this attempt's timestamp, and a `v1,<base64 HMAC-SHA256>` signature per secret in
 * force at `now` (the gateway's clock), space-separated, so a receiver that still has the previous secret verifies during the
 * rotation's overlap. The `standardwebhooks` package signs.
 */
export function signedHeaders(webhookId: string, payload: string, secrets: EndpointSecrets, at: Date, now: Date = at): Record<string, string> {
  const inForce = [secrets.secret];
  if (secrets.previousSecret && secrets.previousSecretExpiresAt && secrets.previousSecretExpiresAt.getTime() > now.getTime()) {
    inForce.push(secrets.previousSecret);
  }
  return {
    'content-type': 'application/json',
    'user-agent': 'agent-session-gateway-webhooks',
    'webhook-id': webhookId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': inForce.map((secret) => new Webhook(secret).sign(webhookId, at, payload)).join(' '),
  };
}
