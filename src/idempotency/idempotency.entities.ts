import { EntitySchema } from 'typeorm';
import { columnTypes, type Dialect } from '../persistence/dialect';

export type IdempotencyState = 'RUNNING' | 'DONE';

/** One idempotency key of one caller: the fingerprint of its input and, once done, its outcome. */
export interface IdempotencyRow {
  orgId: string;
  userId: string;
  key: string;
  inputHash: string;
  state: IdempotencyState;
  /** The JSON outcome a retry receives (set when DONE). */
  outcome: string | null;
  sessionId: string | null;
  turnId: string | null;
  createdDate: Date;
  /** RUNNING: when a retry may take the key over (its first call died); DONE: when the key is forgotten. */
  expiresAt: Date;
}

export function idempotencyEntities(dialect: Dialect) {
  const t = columnTypes(dialect);
  const idempotencyKeys = new EntitySchema<IdempotencyRow>({
    name: 'IdempotencyKey',
    tableName: 'idempotency_keys',
    columns: {
      orgId: { type: 'varchar', length: 64, name: 'org_id', primary: true, ...t.exactId },
      userId: { type: 'varchar', length: 64, name: 'user_id', primary: true, ...t.exactId },
      key: { type: 'varchar', length: 200, name: 'idem_key', primary: true, ...t.exactId },
      inputHash: { type: 'varchar', length: 64, name: 'input_hash' },
      state: { type: 'varchar', length: 16 },
      outcome: { type: t.longText, nullable: true },
      sessionId: { type: 'varchar', length: 36, name: 'session_id', nullable: true, ...t.exactId },
      turnId: { type: 'varchar', length: 36, name: 'turn_id', nullable: true, ...t.exactId },
      createdDate: { ...t.datetime, name: 'created_date' },
      expiresAt: { ...t.datetime, name: 'expires_at' },
    },
    indices: [{ name: 'idx_idempotency_expires', columns: ['expiresAt'] }],
  });
  return { idempotencyKeys };
}

export type IdempotencyEntities = ReturnType<typeof idempotencyEntities>;
