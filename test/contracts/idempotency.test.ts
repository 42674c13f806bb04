import { IdempotencyKeys } from '../../src/idempotency/idempotency-keys';
import { mysqlTestDatabase, sqliteTestDatabase, type TestDatabaseFactory } from '../support/db';
import { InMemoryIdempotencyKeys } from '../support/in-memory-ports';
import { describeWithMysql } from '../support/services';
import { idempotencyContract, type IdempotencySubject } from './idempotency.contract';

const onDatabase = (openDatabase: TestDatabaseFactory) => async (): Promise<IdempotencySubject> => {
  const t = await openDatabase();
  return { keys: new IdempotencyKeys(t.db), dispose: () => t.dispose() };
};

describe('idempotency keys: SQL table on embedded SQLite', () => idempotencyContract(onDatabase(sqliteTestDatabase)));
describeWithMysql('idempotency keys: SQL table on MySQL/MariaDB', () => idempotencyContract(onDatabase(mysqlTestDatabase)));
describe('idempotency keys: the in-memory fake of the orchestrator tests', () =>
  idempotencyContract(async () => ({ keys: new InMemoryIdempotencyKeys(), dispose: async () => {} })));
