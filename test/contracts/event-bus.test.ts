import { randomUUID } from 'node:crypto';
import { InProcessEventBus } from '../../src/events/in-process-event-bus.adapter';
import { RedisEventBus } from '../../src/events/redis-event-bus.adapter';
import { createLogger } from '../../src/logger';
import { describeWithRedis, redisUrl } from '../support/services';
import { eventBusContract } from './event-bus.contract';

const logger = createLogger('silent');

describe('event bus: in-process', () =>
  eventBusContract(async () => {
    const bus = new InProcessEventBus(logger);
    return { publisher: bus, subscriber: bus, dispose: () => bus.close() };
  }));

describeWithRedis('event bus: Redis, between two instances', () =>
  eventBusContract(async () => {
    // A prefix of its own: Redis is shared with other suites and other helpers' runs.
    const keyPrefix = `gw-contract-${randomUUID()}:`;
    const open = () => new RedisEventBus({ url: redisUrl!, keyPrefix, logger });
    const publisher = open();
    const subscriber = open();
    return { publisher, subscriber, dispose: async () => void (await Promise.all([publisher.close(), subscriber.close()])) };
  }));
