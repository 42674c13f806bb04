import { resolve } from 'node:path';
import { DEFAULT_CHAIN_TTL_SECONDS } from './domain/chain';
import { parsePricing, type PricingTable } from './domain/pricing';
import { authConfig, type AuthConfig } from './auth/auth-config';
import { ConfigError } from './config-error';

/**
 * Every environment variable the gateway reads, parsed and checked once at start-up.
 * A value that does not parse stops the process with a message naming the variable.
 */
export interface Config {
  readonly nodeEnv: 'production' | 'development' | 'test';
  readonly isProduction: boolean;
  readonly host: string;
  readonly port: number;
  readonly logLevel: string;
  readonly dataDir: string;
  readonly databaseUrl: string | null;
  readonly dbPoolSize: number;
  /** Longest wait for a new MySQL connection, and for the reachability probe. */
  readonly dbConnectTimeoutMs: number;
  /** Longest one MySQL statement may run; its connection is then discarded. */
  readonly dbQueryTimeoutMs: number;
  readonly jwtSecret: string;
  /** True when JWT_SECRET was not set and the well-known development secret is in use. */
  readonly jwtSecretIsDefault: boolean;
  /** Who may sign tokens: the shared secret, an OpenID Provider, or both (issue 41). */
  readonly auth: AuthConfig;
  readonly limits: AbuseLimits;
  /** How long in-flight HTTP requests may take to finish on shutdown. */
  readonly shutdownGraceMs: number;
  /**
   * How long an idle keep-alive connection stays open. Longer than any proxy in front keeps an
   * idle connection to the gateway: a proxy reusing one the gateway is closing answers 502.
   */
  readonly httpKeepAliveTimeoutMs: number;
  /** OPENAI_API_KEY: set means OpenAI embeddings (and the real LLM); unset means the local defaults. */
  readonly openaiApiKey: string | null;
  readonly openaiBaseUrl: string | null;
  /** OPENAI_ORG_ID and OPENAI_PROJECT_ID: sent as the OpenAI-Organization and OpenAI-Project headers when set. */
  readonly openaiOrganization: string | null;
  readonly openaiProject: string | null;
  readonly retrieval: RetrievalConfig;
  readonly live: LiveConfig;
  readonly execute: ExecuteConfig;
  readonly blobs: BlobConfig;
  /** Per-user and per-org budgets for executes; 0 means no limit. */
  readonly budgets: BudgetConfig;
  /** CI set (to anything but false or 0): a CI runner, where the CLIs print no progress lines. */
  readonly ci: boolean;
  /** METRICS_TOKEN: set means GET /metrics wants `Authorization: Bearer <it>`; null leaves it open. */
  readonly metricsToken: string | null;
  readonly tracing: TracingConfig;
  readonly webhooks: WebhookConfig;
}

/** Webhook deliveries (issue 39): where they may go, how they are sent and retried. */
export interface WebhookConfig {
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: endpoints may resolve to loopback, private and link-local addresses. */
  readonly allowPrivateNetworks: boolean;
  /** One attempt, connection to last byte read. */
  readonly timeoutMs: number;
  /** Bytes of a receiver's response read at most; the rest is not waited for. */
  readonly maxResponseBytes: number;
  readonly retryBaseDelayMs: number;
  readonly retryMaxDelayMs: number;
  /** No attempt is made this long after the event (or a redelivery). */
  readonly retryWindowSeconds: number;
  /** Attempts in flight to one endpoint from one instance. */
  readonly endpointConcurrency: number;
  /** Attempts per second to one endpoint from one instance; 0 = no limit. */
  readonly endpointRatePerSecond: number;
  /** Attempts in flight from one instance, all endpoints together. */
  readonly maxInFlight: number;
  /** How often an instance looks for due deliveries besides being woken by its own turns' changes. */
  readonly pollIntervalMs: number;
  /** Settled deliveries are deleted this long after their event. */
  readonly retentionDays: number;
  /** GATEWAY_PUBLIC_URL: the gateway as receivers reach it; blob URLs in webhook bodies are made absolute with it. */
  readonly publicUrl: string | null;
}

/**
 * OpenTelemetry tracing from the standard OTEL_* variables: on when an OTLP endpoint is set
 * (or OTEL_TRACES_EXPORTER=otlp), off when OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true.
 */
export type TracingConfig =
  | { readonly enabled: false }
  | {
      readonly enabled: true;
      /** Where spans are POSTed (OTLP/HTTP, JSON): the traces endpoint, or the base endpoint + /v1/traces. */
      readonly tracesUrl: string;
      readonly headers: Readonly<Record<string, string>>;
      readonly serviceName: string;
    };

export interface BudgetConfig {
  readonly executesPerMinute: number;
  readonly orgExecutesPerMinute: number;
  readonly turnsInFlightPerUser: number;
}

export interface RetrievalConfig {
  /** Set means Qdrant; unset means the embedded index under DATA_DIR. */
  readonly qdrantUrl: string | null;
  readonly qdrantApiKey: string | null;
  readonly embeddingModel: string;
  /** Vector size to ask the embedding model for; null means the model's own. */
  readonly embeddingDimensions: number | null;
  /** Chunks retrieved per instruction. */
  readonly topK: number;
  /** Per call to the vector store or the embedding provider. */
  readonly timeoutMs: number;
  /** Read `<orgId>__<vectorCollection>`, so one org cannot search another's index by naming it. */
  readonly orgScopedCollections: boolean;
}

/** Subscriptions: the event bus between instances, resumable history and the WebSocket transport. */
export interface LiveConfig {
  /** redis:// or rediss:// URL; null means the in-process bus (a single instance). */
  readonly redisUrl: string | null;
  /** Prefix of every Redis key and channel, so deployments can share one Redis. */
  readonly redisKeyPrefix: string;
  /** Stored status events older than this are pruned; resuming from before them is refused. */
  readonly eventRetentionHours: number;
  /** A WebSocket that sends no connection_init within this time is closed with 4408. */
  readonly wsConnectionInitTimeoutMs: number;
  /** Server ping interval on WebSockets; a peer that does not pong within it is dropped. 0 disables. */
  readonly wsKeepAliveMs: number;
  /** Operations one WebSocket may run at once; the next gets TOO_MANY_SUBSCRIPTIONS. */
  readonly wsMaxSubscriptionsPerConnection: number;
  /** WebSockets one user may hold open on this instance; the next closes with 4429. */
  readonly wsMaxConnectionsPerUser: number;
  /** Largest WebSocket message; a larger one closes the socket with 1009. */
  readonly wsMaxPayloadBytes: number;
  /** Bytes waiting to be sent on one WebSocket beyond which the client is dropped as too slow (4413). */
  readonly wsMaxBufferedBytes: number;
  /** Subscribers with the same operation and visibility share one execution per event. */
  readonly wsSharedExecution: boolean;
  /** Server-Sent Event streams (one operation each) one user may hold open on this instance; the next gets 429. */
  readonly sseMaxStreamsPerUser: number;
  /** A Redis command or PING unanswered for this long counts as Redis being away. */
  readonly redisTimeoutMs: number;
}

/** The turn pipeline (issue 3). */
export interface ExecuteConfig {
  /** Model when neither the conversation nor the agent context names one. */
  readonly defaultModel: string;
  readonly llmTimeoutMs: number;
  readonly llmMaxRetries: number;
  readonly llmRetryMaxDelayMs: number;
  readonly chainTtlSeconds: number;
  readonly toolResultTimeoutSeconds: number;
  readonly turnLeaseSeconds: number;
  readonly idempotencyWaitMs: number;
  readonly idempotencyRetentionSeconds: number;
  readonly modelPricing: PricingTable;
  readonly maxServerToolRounds: number;
  readonly maxClientToolRounds: number;
}

/** S3_BUCKET set selects S3; unset keeps blobs under DATA_DIR/blobs. */
export interface BlobConfig {
  readonly s3Bucket: string | null;
  readonly s3Endpoint: string | null;
  readonly s3Region: string;
  readonly s3ForcePathStyle: boolean;
}

export interface AbuseLimits {
  readonly maxDepth: number;
  readonly maxAliases: number;
  readonly maxTokens: number;
  /** The cost model's limit (graphql/cost.ts). */
  readonly maxCost: number;
  /** List items one response may hold (graphql/response-budget.ts). */
  readonly maxResponseItems: number;
  readonly maxDirectives: number;
  readonly bodyLimitBytes: number;
}

export { ConfigError };

/**
 * GRAPHQL_MAX_COST by default: every operation a real client sends passes at the largest
 * page size (test/unit/cost-calibration.test.ts checks them), the floods of issue 8 do not.
 */
export const DEFAULT_MAX_COST = 30_000;

/** Only for local use: `npm start` and `npm run token` agree on it when JWT_SECRET is unset. */
export const DEVELOPMENT_JWT_SECRET = 'agent-session-gateway-development-secret-do-not-use-in-production';

type Env = Readonly<Record<string, string | undefined>>;

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = oneOf(env, 'NODE_ENV', ['production', 'development', 'test'] as const, 'development');
  const isProduction = nodeEnv === 'production';
  const jwtSecret = env.JWT_SECRET ?? '';
  const auth = authConfig(env, isProduction);
  // With an identity provider, JWT_SECRET is optional (service-to-service tokens only).
  if (isProduction && (auth.oidc === null || jwtSecret !== '') && jwtSecret.length < 32) {
    throw new ConfigError('JWT_SECRET must be set to at least 32 characters when NODE_ENV=production (or configure AUTH_ISSUER / AUTH_JWKS_URL)');
  }
  const databaseUrl = env.DATABASE_URL?.trim() || null;
  const qdrantUrl = env.QDRANT_URL?.trim() || null;
  if (qdrantUrl && !/^https?:\/\/[^/]/.test(qdrantUrl)) {
    throw new ConfigError('QDRANT_URL must be an http:// or https:// URL');
  }
  const embeddingDimensions = env.OPENAI_EMBEDDING_DIMENSIONS?.trim()
    ? int(env, 'OPENAI_EMBEDDING_DIMENSIONS', 1, 1, 16_384)
    : null;
  const redisUrl = env.REDIS_URL?.trim() || null;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError('REDIS_URL must be a redis:// (or rediss://) URL');
  }
  const redisKeyPrefix = env.REDIS_KEY_PREFIX?.trim() || 'asg:';
  if (!/^[A-Za-z0-9:_.-]{1,64}$/.test(redisKeyPrefix)) {
    throw new ConfigError('REDIS_KEY_PREFIX must be 1-64 characters of A-Z a-z 0-9 : _ . -');
  }
  if (databaseUrl) checkDatabaseUrl(databaseUrl);
  return {
    nodeEnv,
    isProduction,
    host: env.HOST?.trim() || '0.0.0.0',
    port: int(env, 'PORT', 4000, 0, 65535),
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    dataDir: resolve(env.DATA_DIR?.trim() || './data'),
    databaseUrl: databaseUrl?.replace(/^mariadb:/, 'mysql:') ?? null,
    dbPoolSize: int(env, 'DB_POOL_SIZE', 10, 1, 1000),
    dbConnectTimeoutMs: int(env, 'DB_CONNECT_TIMEOUT_MS', 3_000, 100, 120_000),
    dbQueryTimeoutMs: int(env, 'DB_QUERY_TIMEOUT_MS', 30_000, 100, 3_600_000),
    jwtSecret: jwtSecret || DEVELOPMENT_JWT_SECRET,
    jwtSecretIsDefault: jwtSecret === '',
    auth,
    limits: {
      maxDepth: int(env, 'GRAPHQL_MAX_DEPTH', 10, 1, 100),
      maxAliases: int(env, 'GRAPHQL_MAX_ALIASES', 15, 0, 1000),
      maxTokens: int(env, 'GRAPHQL_MAX_TOKENS', 2000, 10, 100_000),
      maxCost: int(env, 'GRAPHQL_MAX_COST', DEFAULT_MAX_COST, 1, 10_000_000),
      maxResponseItems: int(env, 'GRAPHQL_MAX_RESPONSE_ITEMS', 50_000, 1, 10_000_000),
      maxDirectives: int(env, 'GRAPHQL_MAX_DIRECTIVES', 20, 0, 1000),
      bodyLimitBytes: int(env, 'HTTP_BODY_LIMIT_BYTES', 5 * 1024 * 1024, 1024, 100 * 1024 * 1024),
    },
    shutdownGraceMs: int(env, 'SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    httpKeepAliveTimeoutMs: int(env, 'HTTP_KEEPALIVE_TIMEOUT_MS', 65_000, 1_000, 3_600_000),
    openaiApiKey: env.OPENAI_API_KEY?.trim() || null,
    openaiBaseUrl: url(env, 'OPENAI_BASE_URL'),
    openaiOrganization: env.OPENAI_ORG_ID?.trim() || null,
    openaiProject: env.OPENAI_PROJECT_ID?.trim() || null,
    retrieval: {
      qdrantUrl,
      qdrantApiKey: env.QDRANT_API_KEY?.trim() || null,
      embeddingModel: env.OPENAI_EMBEDDING_MODEL?.trim() || 'text-embedding-3-small',
      embeddingDimensions,
      topK: int(env, 'RETRIEVAL_TOP_K', 8, 1, 100),
      timeoutMs: int(env, 'RETRIEVAL_TIMEOUT_MS', 5000, 100, 600_000),
      orgScopedCollections: bool(env, 'RETRIEVAL_ORG_SCOPED_COLLECTIONS', true),
    },
    live: {
      redisUrl,
      redisKeyPrefix,
      eventRetentionHours: int(env, 'EVENT_RETENTION_HOURS', 72, 1, 24 * 366),
      wsConnectionInitTimeoutMs: int(env, 'WS_CONNECTION_INIT_TIMEOUT_MS', 5_000, 100, 600_000),
      wsKeepAliveMs: int(env, 'WS_KEEPALIVE_MS', 12_000, 0, 600_000),
      wsMaxSubscriptionsPerConnection: int(env, 'WS_MAX_SUBSCRIPTIONS_PER_CONNECTION', 100, 1, 100_000),
      wsMaxConnectionsPerUser: int(env, 'WS_MAX_CONNECTIONS_PER_USER', 20, 1, 100_000),
      wsMaxPayloadBytes: int(env, 'WS_MAX_PAYLOAD_BYTES', 65_536, 1024, 100 * 1024 * 1024),
      wsMaxBufferedBytes: int(env, 'WS_MAX_BUFFERED_BYTES', 1024 * 1024, 16 * 1024, 1024 * 1024 * 1024),
      wsSharedExecution: bool(env, 'WS_SHARED_EXECUTION', true),
      sseMaxStreamsPerUser: int(env, 'SSE_MAX_STREAMS_PER_USER', 100, 1, 100_000),
      redisTimeoutMs: int(env, 'REDIS_TIMEOUT_MS', 2_000, 50, 60_000),
    },
    execute: {
      defaultModel: env.OPENAI_MODEL?.trim() || 'gpt-4.1-mini',
      llmTimeoutMs: int(env, 'LLM_TIMEOUT_MS', 300_000, 100, 3_600_000),
      llmMaxRetries: int(env, 'LLM_MAX_RETRIES', 2, 0, 10),
      llmRetryMaxDelayMs: int(env, 'LLM_RETRY_MAX_DELAY_MS', 20_000, 0, 600_000),
      chainTtlSeconds: int(env, 'OPENAI_CHAIN_TTL_SECONDS', DEFAULT_CHAIN_TTL_SECONDS, 1, 365 * 24 * 3600),
      toolResultTimeoutSeconds: int(env, 'TOOL_RESULT_TIMEOUT_SECONDS', 1800, 1, 7 * 24 * 3600),
      turnLeaseSeconds: int(env, 'TURN_LEASE_SECONDS', 120, 1, 3600),
      idempotencyWaitMs: int(env, 'IDEMPOTENCY_WAIT_MS', 10_000, 0, 600_000),
      idempotencyRetentionSeconds: int(env, 'IDEMPOTENCY_TTL_SECONDS', 24 * 3600, 60, 30 * 24 * 3600),
      modelPricing: pricing(env.MODEL_PRICING),
      maxServerToolRounds: int(env, 'MAX_SERVER_TOOL_ROUNDS', 8, 0, 64),
      maxClientToolRounds: int(env, 'MAX_CLIENT_TOOL_ROUNDS', 32, 1, 1000),
    },
    blobs: {
      s3Bucket: env.S3_BUCKET?.trim() || null,
      s3Endpoint: url(env, 'S3_ENDPOINT'),
      s3Region: env.S3_REGION?.trim() || env.AWS_REGION?.trim() || 'us-east-1',
      s3ForcePathStyle: bool(env, 'S3_FORCE_PATH_STYLE', Boolean(env.S3_ENDPOINT?.trim())),
    },
    budgets: {
      executesPerMinute: int(env, 'RATE_LIMIT_EXECUTES_PER_MINUTE', 60, 0, 1_000_000),
      orgExecutesPerMinute: int(env, 'RATE_LIMIT_ORG_EXECUTES_PER_MINUTE', 1_000, 0, 10_000_000),
      turnsInFlightPerUser: int(env, 'MAX_TURNS_IN_FLIGHT_PER_USER', 10, 0, 100_000),
    },
    ci: ciRunner(env.CI),
    metricsToken: env.METRICS_TOKEN?.trim() || null,
    tracing: tracingConfig(env),
    webhooks: {
      allowPrivateNetworks: bool(env, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
      timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
      maxResponseBytes: int(env, 'WEBHOOK_MAX_RESPONSE_BYTES', 64 * 1024, 0, 16 * 1024 * 1024),
      retryBaseDelayMs: int(env, 'WEBHOOK_RETRY_BASE_DELAY_MS', 5_000, 10, 3_600_000),
      retryMaxDelayMs: int(env, 'WEBHOOK_RETRY_MAX_DELAY_MS', 3_600_000, 10, 24 * 3_600_000),
      retryWindowSeconds: int(env, 'WEBHOOK_RETRY_WINDOW_SECONDS', 24 * 3600, 1, 7 * 24 * 3600),
      endpointConcurrency: int(env, 'WEBHOOK_ENDPOINT_CONCURRENCY', 4, 1, 1000),
      endpointRatePerSecond: int(env, 'WEBHOOK_ENDPOINT_RATE_PER_SECOND', 20, 0, 100_000),
      maxInFlight: int(env, 'WEBHOOK_MAX_IN_FLIGHT', 64, 1, 10_000),
      pollIntervalMs: int(env, 'WEBHOOK_POLL_INTERVAL_MS', 1_000, 10, 600_000),
      retentionDays: int(env, 'WEBHOOK_DELIVERY_RETENTION_DAYS', 30, 1, 3650),
      publicUrl: url(env, 'GATEWAY_PUBLIC_URL'),
    },
  };
}

/**
 * CI runners set CI, mostly to `true` but not only; any value but false or 0 counts, and none
 * is an error: the variable is the runner's, not ours to refuse.
 */
function tracingConfig(env: Env): TracingConfig {
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() || null;
  if (exporter !== null && exporter !== 'otlp' && exporter !== 'none') {
    throw new ConfigError('OTEL_TRACES_EXPORTER must be otlp or none (only the OTLP/HTTP exporter is built in)');
  }
  const tracesEndpoint = url(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const endpoint = url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (exporter === 'none' || bool(env, 'OTEL_SDK_DISABLED', false)) return { enabled: false };
  if (exporter === null && !tracesEndpoint && !endpoint) return { enabled: false };
  const tracesUrl = tracesEndpoint ?? `${(endpoint ?? 'http://localhost:4318').replace(/\/+$/, '')}/v1/traces`;
  return { enabled: true, tracesUrl, headers: otlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS), serviceName: env.OTEL_SERVICE_NAME?.trim() || 'agent-session-gateway' };
}

/** `key1=value1,key2=value2`, values URL-encoded (the OTLP exporter specification's format). */
function otlpHeaders(raw: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (raw ?? '').split(',')) {
    if (!pair.trim()) continue;
    const at = pair.indexOf('=');
    if (at <= 0) throw new ConfigError('OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs separated by commas');
    headers[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return headers;
}

function ciRunner(raw: string | undefined): boolean {
  const value = raw?.trim().toLowerCase() ?? '';
  return value !== '' && value !== 'false' && value !== '0';
}

function url(env: Env, name: string): string | null {
  const raw = env[name]?.trim();
  if (!raw) return null;
  if (!/^https?:\/\/[^\s]+$/.test(raw)) throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  return raw;
}

function pricing(raw: string | undefined): PricingTable {
  try {
    return parsePricing(raw);
  } catch (e) {
    throw new ConfigError((e as Error).message);
  }
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (!raw) return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

function checkDatabaseUrl(url: string): void {
  if (!/^(mysql|mariadb):\/\//.test(url) || !URL.canParse(url)) {
    throw new ConfigError('DATABASE_URL must be a mysql:// (or mariadb://) URL');
  }
  const parsed = new URL(url);
  if (parsed.pathname.replace(/^\//, '') === '') {
    throw new ConfigError('DATABASE_URL must name a database: mysql://user:pass@host:3306/<database>');
  }
  const socketPath = parsed.searchParams.get('socketPath');
  if (socketPath !== null && !socketPath.startsWith('/')) {
    throw new ConfigError("DATABASE_URL: socketPath must be the absolute path of the server's Unix socket");
  }
}
