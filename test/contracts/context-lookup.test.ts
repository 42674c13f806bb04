import { randomUUID } from 'node:crypto';
import { ContextDirectory } from '../../src/contexts/context-directory';
import { parseAgentContext, parseConversationContext } from '../../src/domain/contexts';
import { mysqlTestDatabase, sqliteTestDatabase, type TestDatabaseFactory } from '../support/db';
import { InMemoryContexts } from '../support/in-memory-ports';
import { describeWithMysql } from '../support/services';
import { contextLookupContract, type ContextLookupSubject } from './context-lookup.contract';

const onDatabase = (openDatabase: TestDatabaseFactory) => async (): Promise<ContextLookupSubject> => {
  const t = await openDatabase();
  const directory = new ContextDirectory(t.db);
  return {
    lookup: directory,
    addAgent: (caller, draft) => directory.upsertAgentContext(caller, draft),
    addConversation: (caller, draft) => directory.upsertConversationContext(caller, draft),
    dispose: () => t.dispose(),
  };
};

describe('context lookup: context tables on embedded SQLite', () => contextLookupContract(onDatabase(sqliteTestDatabase)));
describeWithMysql('context lookup: context tables on MySQL/MariaDB', () => contextLookupContract(onDatabase(mysqlTestDatabase)));
describe('context lookup: the in-memory fake of the orchestrator tests', () =>
  contextLookupContract(async () => {
    const fake = new InMemoryContexts();
    return {
      lookup: fake,
      async addAgent(caller, draft) {
        const record = { id: randomUUID(), orgId: caller.orgId, ...parseAgentContext(draft) };
        fake.agents.push(record);
        return record;
      },
      async addConversation(caller, draft) {
        const record = { id: randomUUID(), orgId: caller.orgId, ...parseConversationContext(draft) };
        fake.conversations.push(record);
        return record;
      },
      dispose: async () => {},
    };
  }));
