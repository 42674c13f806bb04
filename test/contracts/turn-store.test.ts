import { createSessionStore } from '../../src/sessions/session-store';
import type { TurnStatusEvent } from '../../src/events/turn-events';
import { mysqlTestDatabase, sqliteTestDatabase, type TestDatabaseFactory } from '../support/db';
import { InMemoryTurnStore } from '../support/in-memory-ports';
import { describeWithMysql } from '../support/services';
import { turnStoreContract, type TurnStoreFactory } from './turn-store.contract';

const onDatabase =
  (openDatabase: TestDatabaseFactory): TurnStoreFactory =>
  async (clock) => {
    const t = await openDatabase();
    const events: TurnStatusEvent[] = [];
    const store = createSessionStore({ db: t.db, events: { turnStatusChanged: (e) => events.push(e) }, now: clock.now });
    return { turns: store.lifecycle, leases: store.leases, events: () => events, dispose: () => t.dispose() };
  };

describe('turn store: SQL adapter on embedded SQLite', () => turnStoreContract(onDatabase(sqliteTestDatabase)));
describeWithMysql('turn store: SQL adapter on MySQL/MariaDB', () => turnStoreContract(onDatabase(mysqlTestDatabase)));
describe('turn store: the in-memory fake of the orchestrator tests', () =>
  turnStoreContract(async (clock) => {
    const store = new InMemoryTurnStore(clock.now);
    return { turns: store, leases: store, events: () => store.events, dispose: async () => {} };
  }));
