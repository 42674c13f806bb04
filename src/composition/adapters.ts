import { AlgorithmRoutingVerifier } from '../auth/algorithm-routing';
import { JwksTokenVerifier } from '../auth/jwks.adapter';
import { SharedSecretTokenVerifier } from '../auth/shared-secret.adapter';
import type { TokenVerifier } from '../auth/token-verifier.port';
import type { BlobStore } from '../blobs/blob-store.port';
import { SqliteBlobStore } from '../blobs/sqlite.adapter';
import { LimitedExecuteBudget } from '../budgets/execute-budget';
import type { ExecuteBudget } from '../budgets/execute-budget.port';
import { memoryBudgetStores } from '../budgets/memory-budget.adapter';
import type { Config } from '../config';
import type { EventBus } from '../events/event-bus.port';
import { InProcessEventBus } from '../events/in-process-event-bus.adapter';
import type { LanguageModel } from '../llm/llm.port';
import { OfflineLanguageModel } from '../llm/offline.adapter';
import type { Logger } from '../logger';

/*
 * The adapter pickers of the composition root (retrieval has its own: retrieval/create-retrieval.ts).
 * Adapters of optional services (Redis, S3, OpenAI) are loaded only when configured: their
 * client libraries would otherwise take memory in every instance (docs/performance.md). (A
 * synchronous require: the choice is made while wiring, and jest runs this code as CommonJS.)
 */
type RedisBudgetModule = typeof import('../budgets/redis-budget.adapter');

/** The Redis bus when REDIS_URL is set, else events stay in this process. */
export function eventBusOf(config: Config, logger: Logger): EventBus {
  const { redisUrl, redisKeyPrefix, redisTimeoutMs } = config.live;
  if (!redisUrl) return new InProcessEventBus(logger);
  const { RedisEventBus } = require('../events/redis-event-bus.adapter') as typeof import('../events/redis-event-bus.adapter');
  return new RedisEventBus({ url: redisUrl, keyPrefix: redisKeyPrefix, timeoutMs: redisTimeoutMs, logger });
}

/** Budgets shared through Redis when REDIS_URL is set, else counted in this process. */
export function executeBudgetOf(config: Config, logger: Logger): ExecuteBudget {
  const { redisUrl, redisKeyPrefix, redisTimeoutMs } = config.live;
  const stores = redisUrl
    ? (require('../budgets/redis-budget.adapter') as RedisBudgetModule).redisBudgetStores(config.budgets, {
        url: redisUrl,
        keyPrefix: redisKeyPrefix,
        timeoutMs: redisTimeoutMs,
        logger,
      })
    : memoryBudgetStores(config.budgets);
  // A slot lapses like a turn lease: renewed while its instance lives.
  return new LimitedExecuteBudget({ limits: config.budgets, stores, slotTtlMs: config.execute.turnLeaseSeconds * 1000, logger });
}

/** S3 when S3_BUCKET is set, else the embedded store in DATA_DIR/blobs.sqlite. */
export function blobStoreOf(config: Config, logger: Logger): BlobStore & { close?(): Promise<void> } {
  const { s3Bucket, s3Endpoint, s3Region, s3ForcePathStyle } = config.blobs;
  if (!s3Bucket) return new SqliteBlobStore(config.dataDir, logger);
  const { S3BlobStore } = require('../blobs/s3.adapter') as typeof import('../blobs/s3.adapter');
  return new S3BlobStore({ bucket: s3Bucket, endpoint: s3Endpoint, region: s3Region, forcePathStyle: s3ForcePathStyle });
}

/** The OpenAI Responses API when OPENAI_API_KEY is set, else the offline adapter. */
export function languageModelOf(config: Config, onRetry: () => void): LanguageModel {
  if (!config.openaiApiKey) return new OfflineLanguageModel();
  const { OpenAIResponsesAdapter } = require('../llm/openai-responses.adapter') as typeof import('../llm/openai-responses.adapter');
  const { llmTimeoutMs, llmMaxRetries, llmRetryMaxDelayMs } = config.execute;
  return new OpenAIResponsesAdapter({
    apiKey: config.openaiApiKey,
    baseURL: config.openaiBaseUrl,
    organization: config.openaiOrganization,
    project: config.openaiProject,
    timeoutMs: llmTimeoutMs,
    retry: { maxRetries: llmMaxRetries, maxDelayMs: llmRetryMaxDelayMs },
    onRetry,
  });
}

/** HS256 with JWT_SECRET (or the development secret), the identity provider's JWKS, or both (issue 41). */
export function tokenVerifierOf({ auth, jwtSecret }: Config, logger: Logger): TokenVerifier {
  return new AlgorithmRoutingVerifier({
    sharedSecret: auth.acceptSharedSecret ? new SharedSecretTokenVerifier(jwtSecret) : null,
    provider: auth.oidc ? new JwksTokenVerifier(auth.oidc, logger) : null,
  });
}
