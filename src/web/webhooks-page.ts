import {
  GatewayError,
  RedeliverWebhookDocument,
  WebhookDeliveriesDocument,
  WebhookEndpointsDocument,
  type WebhookDeliveryRowFragment,
  type WebhookEndpointsQuery,
} from '../../packages/client/src';
import type { App, Page } from './app';
import { clear, formatNumber, h, statusBadge, timeAgo } from './dom';
import { hrefOf } from './routes';

/** Deliveries shown per endpoint: the most recent. */
const RECENT_DELIVERIES = 10;
type Endpoint = WebhookEndpointsQuery['webhookEndpoints'][number];

/**
 * The organisation's webhook endpoints (admins), each with its recent deliveries, their
 * attempts, and a Redeliver button that sends one again with the same webhook-id.
 */
export function mountWebhooksPage(app: App, main: HTMLElement): Page {
  let disposed = false;
  const notice = h('p', { class: 'notice', role: 'status' });
  const list = h('div', { class: 'endpoints' });
  clear(main, h('div', { class: 'page-head' }, h('h1', {}, 'Webhooks')), notice, list);

  async function load(): Promise<void> {
    if (!app.isAdmin) {
      notice.textContent = 'Webhooks are managed by organisation admins.';
      return;
    }
    try {
      const { webhookEndpoints } = await app.client.query(WebhookEndpointsDocument);
      if (disposed) return;
      if (webhookEndpoints.length === 0) notice.textContent = 'No webhook endpoints yet: create one with the createWebhookEndpoint mutation.';
      clear(list, ...webhookEndpoints.map(endpointCard));
    } catch (e) {
      failed(e, 'Could not load the webhook endpoints');
    }
  }

  function endpointCard(endpoint: Endpoint): HTMLElement {
    const rows = h('tbody');
    const card = h(
      'section',
      { class: 'card endpoint', 'data-testid': 'webhook-endpoint', 'data-endpoint-id': endpoint.id, 'aria-label': endpoint.url },
      h(
        'div',
        { class: 'turn-head' },
        h('h2', { class: 'endpoint-url' }, endpoint.url),
        h('span', { class: `status ${endpoint.enabled ? 'status-completed' : 'status-failed'}`, 'data-testid': 'endpoint-state' }, endpoint.enabled ? 'ENABLED' : 'DISABLED'),
      ),
      endpoint.description ? h('p', {}, endpoint.description) : null,
      h('p', { class: 'muted' }, `Events: ${endpoint.events.join(', ')}`, endpoint.disabledReason ? ` · Disabled: ${endpoint.disabledReason}` : ''),
      h(
        'table',
        { class: 'deliveries' },
        h('caption', {}, 'Recent deliveries'),
        h('thead', {}, h('tr', {}, ...['Event', 'Status', 'Created', 'Attempts', 'Last attempt', ''].map((t) => h('th', { scope: 'col' }, t)))),
        rows,
      ),
    );
    void loadDeliveries(endpoint, rows);
    return card;
  }

  async function loadDeliveries(endpoint: Endpoint, rows: HTMLElement): Promise<void> {
    try {
      const { webhookDeliveries } = await app.client.query(WebhookDeliveriesDocument, { endpointId: endpoint.id, first: RECENT_DELIVERIES });
      if (disposed) return;
      const deliveries = webhookDeliveries.edges.map((e) => e.node);
      if (deliveries.length === 0) clear(rows, h('tr', {}, h('td', { colspan: 6, class: 'muted' }, 'No deliveries yet.')));
      else clear(rows, ...deliveries.map(deliveryRow));
    } catch (e) {
      failed(e, `Could not load the deliveries of ${endpoint.url}`);
    }
  }

  function deliveryRow(delivery: WebhookDeliveryRowFragment): HTMLTableRowElement {
    const last = delivery.attempts.at(-1);
    const message = h('span', { class: 'error', role: 'alert' });
    const redeliver = h(
      'button',
      {
        type: 'button',
        class: 'quiet',
        'aria-label': `Redeliver ${delivery.eventType} ${delivery.webhookId}`,
        onclick: async (event: Event) => {
          const button = event.currentTarget as HTMLButtonElement;
          button.disabled = true;
          try {
            const { redeliverWebhook } = await app.client.mutate(RedeliverWebhookDocument, { deliveryId: delivery.id });
            row.replaceWith(deliveryRow(redeliverWebhook));
          } catch (e) {
            button.disabled = false;
            if (e instanceof GatewayError) app.onError(e);
            message.textContent = `Could not redeliver: ${(e as Error).message}`;
          }
        },
      },
      'Redeliver',
    );
    const lastAttempt = last
      ? `${last.statusCode ?? 'no answer'} · ${formatNumber(last.durationMs)} ms${last.error ? ` · ${last.error}` : ''}`
      : delivery.nextAttemptAt
        ? 'due'
        : '—';
    const row = h(
      'tr',
      { 'data-testid': 'webhook-delivery', 'data-delivery-id': delivery.id },
      h('td', {}, delivery.sessionId ? h('a', { href: hrefOf({ page: 'session', sessionId: delivery.sessionId }) }, delivery.eventType) : delivery.eventType),
      h('td', {}, statusBadge(delivery.status, 'delivery-status')),
      h('td', {}, timeAgo(delivery.createdAt)),
      h('td', { 'data-testid': 'delivery-attempts' }, formatNumber(delivery.attempts.length)),
      h('td', { class: 'muted' }, lastAttempt),
      h('td', {}, redeliver, message),
    );
    return row;
  }

  function failed(e: unknown, what: string): void {
    if (e instanceof GatewayError) app.onError(e);
    notice.textContent = `${what}: ${(e as Error).message}`;
  }

  void load();
  return {
    live: false,
    dispose() {
      disposed = true;
    },
  };
}
