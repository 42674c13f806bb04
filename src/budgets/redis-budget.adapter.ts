import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { reconnectWhenSilent, redisRetryStrategy } from '../events/redis-connection';
import type { Logger } from '../logger';
import type { BudgetLimits, BudgetStores } from './execute-budget';
import { memoryRate } from './memory-budget.adapter';
import { MemorySlotLedger, type SlotLedger } from './slot-ledger';

export interface RedisBudgetOptions {
  readonly url: string;
  readonly keyPrefix: string;
  /** A Redis command unanswered for this long falls back to this instance's own counts. */
  readonly timeoutMs: number;
  readonly logger: Logger;
}

/**
 * Budgets shared by every instance through Redis. While Redis cannot be reached each
 * instance counts on its own (rate-limiter-flexible's insurance limiter; a memory slot
 * ledger), so executes keep working, bounded per instance, as queries and mutations do.
 */
export function redisBudgetStores(limits: BudgetLimits, options: RedisBudgetOptions): BudgetStores {
  const client = new Redis(options.url, {
    connectionName: 'gateway-budgets',
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: options.timeoutMs,
    retryStrategy: redisRetryStrategy,
  });
  let lastLogged = 0;
  client.on('error', (err: Error) => {
    if (Date.now() - lastLogged < 10_000) return;
    lastLogged = Date.now();
    options.logger.warn({ err }, 'redis budget connection error; counting per instance meanwhile');
  });
  const stopWatching = reconnectWhenSilent(client, { intervalMs: Math.max(500, options.timeoutMs), timeoutMs: options.timeoutMs });
  const prefix = `${options.keyPrefix}budget:`;
  const rate = (points: number, name: string) =>
    points > 0
      ? new RateLimiterRedis({
          storeClient: client,
          points,
          duration: 60,
          keyPrefix: `${prefix}${name}`,
          rejectIfRedisNotReady: true,
          insuranceLimiter: memoryRate(points, `${name}-local`) ?? undefined,
        })
      : null;
  return {
    userExecutes: rate(limits.executesPerMinute, 'exec-user'),
    orgExecutes: rate(limits.orgExecutesPerMinute, 'exec-org'),
    slots: new RedisSlotLedger(client, `${prefix}turns:`, new MemorySlotLedger()),
    async close() {
      stopWatching();
      await Promise.race([client.quit().catch(() => undefined), new Promise((r) => setTimeout(r, 1_000).unref())]);
      client.disconnect();
    },
  };
}

/** Drops lapsed slots, then adds this one unless `max` are live; expiries use Redis's clock (one for all instances). */
const HOLD = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

const RENEW = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

/** Each user's slots as a sorted set (slot id -> expiry); slots held while Redis was away live in memory. */
class RedisSlotLedger implements SlotLedger {
  private readonly local = new Set<string>();

  constructor(
    private readonly client: Redis,
    private readonly prefix: string,
    private readonly fallback: MemorySlotLedger,
  ) {}

  async hold(key: string, slotId: string, max: number, ttlMs: number): Promise<boolean> {
    if (this.client.status === 'ready') {
      try {
        return (await this.client.eval(HOLD, 1, this.prefix + key, slotId, max, ttlMs)) === 1;
      } catch {
        // Redis stopped answering: count here until it is back.
      }
    }
    const held = await this.fallback.hold(key, slotId, max, ttlMs);
    if (held) this.local.add(slotId);
    return held;
  }

  async renew(slots: readonly { readonly key: string; readonly slotId: string }[], ttlMs: number): Promise<void> {
    await this.fallback.renew(slots.filter((s) => this.local.has(s.slotId)), ttlMs);
    const shared = slots.filter((s) => !this.local.has(s.slotId));
    if (shared.length === 0 || this.client.status !== 'ready') return;
    const batch = this.client.pipeline();
    for (const { key, slotId } of shared) batch.eval(RENEW, 1, this.prefix + key, slotId, ttlMs);
    await batch.exec();
  }

  async release(key: string, slotId: string): Promise<void> {
    if (this.local.delete(slotId)) return this.fallback.release(key, slotId);
    // Unreachable Redis: the slot lapses at its expiry.
    await this.client.zrem(this.prefix + key, slotId);
  }

  async close(): Promise<void> {
    this.local.clear();
    await this.fallback.close();
  }
}
