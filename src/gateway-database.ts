import { contextEntities } from './contexts/context.entities';
import { eventLogEntities } from './events/event-log.entities';
import { idempotencyEntities } from './idempotency/idempotency.entities';
import { openDatabase, type Database, type DatabaseOptions } from './persistence/database';
import type { Dialect } from './persistence/dialect';
import { forkEntities } from './sessions/fork.entities';
import { provenanceEntities } from './sessions/provenance.entities';
import { sessionEntities } from './sessions/session.entities';
import { webhookEntities } from './webhooks/webhook.entities';

/** Every feature's tables: each feature declares its own; the database registers them all. */
function gatewayEntities(dialect: Dialect) {
  return {
    ...sessionEntities(dialect),
    ...provenanceEntities(dialect),
    ...forkEntities(dialect),
    ...eventLogEntities(dialect),
    ...contextEntities(dialect),
    ...idempotencyEntities(dialect),
    ...webhookEntities(dialect),
  };
}

export type GatewayEntities = ReturnType<typeof gatewayEntities>;
export type GatewayDatabase = Database<GatewayEntities>;

/** The gateway's database with every feature's tables (the gateway, the CLIs and the tests open it so). */
export const openGatewayDatabase = (options: DatabaseOptions): Promise<GatewayDatabase> => openDatabase(options, gatewayEntities);
