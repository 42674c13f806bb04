import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds; from a cache hit to a slow provider call. */
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** What the metrics read when scraped: counts the gateway already keeps. */
export interface LiveGauges {
  websocketConnections(): number;
  sseStreams(): number;
  activeSubscriptions(): number;
  liveGroups(): number;
  /** null on the embedded database. */
  poolUse(): { readonly size: number; readonly inUse: number; readonly idle: number; readonly waiting: number } | null;
}

/**
 * Every metric of one gateway, in a registry of its own (several gateways may share a
 * process in tests). Labels are bounded: operation names go through OperationNames,
 * routes through a fixed list, outcomes are "ok" or an error code.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'gateway_http_requests_total',
    help: 'HTTP requests by method, route and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'gateway_http_request_duration_seconds',
    help: 'HTTP request durations (an event stream lasts as long as it is open).',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  readonly operations = new Counter({
    name: 'gateway_graphql_operations_total',
    help: 'GraphQL operations by name, type, transport and outcome ("ok" or the first error code).',
    labelNames: ['operation', 'type', 'transport', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly operationDuration = new Histogram({
    name: 'gateway_graphql_operation_duration_seconds',
    help: 'GraphQL operation durations (a subscription: until it was subscribed or refused).',
    labelNames: ['operation', 'type', 'transport', 'outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  readonly turns = new Counter({
    name: 'gateway_turns_total',
    help: 'Turns that reached a final status on this instance, by that status.',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });
  readonly llmDuration = new Histogram({
    name: 'gateway_llm_call_duration_seconds',
    help: 'Provider (LLM) call durations, retries included, by outcome.',
    labelNames: ['outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  readonly llmRetries = new Counter({
    name: 'gateway_llm_retries_total',
    help: 'Provider calls attempted again after a retryable failure.',
    registers: [this.registry],
  });
  readonly llmTokens = new Counter({
    name: 'gateway_llm_tokens_total',
    help: 'Tokens the provider reported, by kind (input, output).',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly retrievalDuration = new Histogram({
    name: 'gateway_retrieval_duration_seconds',
    help: 'Retrieval (embedding and vector search) durations by outcome.',
    labelNames: ['outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  readonly busLag = new Histogram({
    name: 'gateway_event_bus_lag_seconds',
    help: 'From a status change being committed to this instance receiving it from the event bus.',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly sqlDuration = new Histogram({
    name: 'gateway_db_statement_duration_seconds',
    help: 'SQL statement durations by outcome.',
    labelNames: ['outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  constructor(gauges: LiveGauges) {
    const registers = [this.registry];
    new Gauge({ name: 'gateway_websocket_connections', help: 'Open WebSocket connections.', registers, collect() {
      this.set(gauges.websocketConnections());
    } });
    new Gauge({ name: 'gateway_sse_streams', help: 'Open Server-Sent Event streams.', registers, collect() {
      this.set(gauges.sseStreams());
    } });
    new Gauge({ name: 'gateway_active_subscriptions', help: 'Running subscriptions over every transport.', registers, collect() {
      this.set(gauges.activeSubscriptions());
    } });
    new Gauge({ name: 'gateway_live_groups', help: 'Shared executions (groups of subscribers that see the same results).', registers, collect() {
      this.set(gauges.liveGroups());
    } });
    new Gauge({
      name: 'gateway_db_pool_connections',
      help: 'Database pool connections by state (size, in_use, idle, waiting); absent on the embedded database.',
      labelNames: ['state'] as const,
      registers,
      collect() {
        const use = gauges.poolUse();
        if (!use) return;
        this.set({ state: 'size' }, use.size);
        this.set({ state: 'in_use' }, use.inUse);
        this.set({ state: 'idle' }, use.idle);
        this.set({ state: 'waiting' }, use.waiting);
      },
    });
    collectDefaultMetrics({ register: this.registry });
  }

  /** The text a scrape receives. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/**
 * The operation names of the documents the gateway's own clients send: the typed client
 * (packages/client/src/operations, which the dashboard uses too), the examples and the
 * README. test/unit/operation-names.test.ts fails when one of those gains a name not here.
 */
export const KNOWN_OPERATION_NAMES: readonly string[] = [
  'CancelTurn', 'Execute', 'ExecuteAsync', 'ForkSession', 'LatestEventId', 'RedeliverWebhook', 'SessionActivity',
  'SessionDetail', 'SessionList', 'Sessions', 'TurnOutput', 'TurnStatusChanged', 'UpsertConversationContext', 'UsageByDay', 'Viewer',
  'WebhookDeliveries', 'WebhookEndpoints',
];

/**
 * Operation names as a label: clients choose them, so only names the gateway knows
 * (KNOWN_OPERATION_NAMES and METRICS_OPERATION_NAMES) are labelled as themselves; any other
 * counts as "other", and an unnamed operation as "anonymous". Made-up names cannot add series.
 */
export class OperationNames {
  private readonly known: ReadonlySet<string>;

  constructor(allowed: Iterable<string> = []) {
    this.known = new Set([...KNOWN_OPERATION_NAMES, ...allowed]);
  }

  label(name: string | null | undefined): string {
    if (!name) return 'anonymous';
    return this.known.has(name) ? name : 'other';
  }
}
