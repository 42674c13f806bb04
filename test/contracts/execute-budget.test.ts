import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { memoryBudgetStores } from '../../src/budgets/memory-budget.adapter';
import { redisBudgetStores } from '../../src/budgets/redis-budget.adapter';
import { createLogger } from '../../src/logger';
import { describeWithRedis, redisUrl } from '../support/services';
import { eventually } from '../support/testkit';
import { executeBudgetContract } from './execute-budget.contract';

describe('execute budget: counted in this process', () => executeBudgetContract(async (limits) => memoryBudgetStores(limits)));

describeWithRedis('execute budget: shared through Redis', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(redisUrl!);
  });
  afterAll(() => redis.quit());

  executeBudgetContract(async (limits) => {
    // A prefix of its own per test: Redis is shared with other suites and other helpers' runs.
    const keyPrefix = `gw-contract-${randomUUID()}:`;
    const stores = redisBudgetStores(limits, { url: redisUrl!, keyPrefix, timeoutMs: 2_000, logger: createLogger('silent') });
    // Until its connection is ready the adapter counts in memory; the contract is about Redis.
    await eventually(async () => {
      await stores.slots.hold(`${keyPrefix}probe`, 'probe', 1, 1_000);
      return (await redis.keys(`${keyPrefix}*`)).length > 0;
    });
    return stores;
  });
});
