import { createLogger } from '../../src/logger';
import { physicalCollection } from '../../src/retrieval/collection';
import { createRetrieval } from '../../src/retrieval/create-retrieval';
import { ingestTree } from '../../src/retrieval/ingest';
import { alice, boss, EXECUTE } from '../support/execute';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai';
import { FakeQdrant } from '../support/fake-qdrant';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { describeWithMysql } from '../support/services';
import { removeTree, SAMPLE_CODE, writeTree } from '../support/source-tree';

const TURN = `query Turn($sessionId: ID!, $turnId: ID!) {
  agentSessionTurn(sessionId: $sessionId, turnId: $turnId) { retrievalPathPrefixes chunkRefs { path } }
}`;
const QUERY = 'Where are PrimaryButton, the theme colours and parseInvoiceTotal?';

interface Store {
  readonly mysql: boolean;
  readonly qdrant: boolean;
}

/**
 * Issue 10 item 3: `retrievalPathPrefixes` restricts retrieval on the configured vector
 * store (embedded index or Qdrant), is stored with the turn, and is never written to the store.
 */
function scopedSuite(store: Store): void {
  let fake: FakeOpenAI;
  let qdrant: FakeQdrant | null = null;
  let t: TestGateway;
  let root: string;
  let agentContextId: string;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    const env: Record<string, string> = { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: fake.url };
    if (store.qdrant) {
      qdrant = new FakeQdrant(null);
      env.QDRANT_URL = await qdrant.start();
    }
    t = await startTestGateway({ mysql: store.mysql, env });
    const agent = await t.gateway.services.contexts.upsertAgentContext(boss, { name: 'Code', vectorCollection: 'code', defaultModel: 'gpt-4.1-mini' });
    agentContextId = agent.id;
    root = writeTree(SAMPLE_CODE);
    const retrieval = createRetrieval(t.gateway.config, createLogger('silent'));
    try {
      await ingestTree(retrieval, { root, repo: 'acme/api', collection: physicalCollection(true, 'acme', 'code') });
    } finally {
      await retrieval.close();
    }
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
    await qdrant?.stop();
    removeTree(root);
  });

  const ask = async (retrievalPathPrefixes: string[] | null) => {
    const res = await t.gql<{ execute: { sessionId: string; turnId: string } }>(t.token({ userId: alice.userId }), EXECUTE, {
      input: { agentContextId, instruction: QUERY, repo: 'acme/api', retrievalPathPrefixes },
    });
    const { sessionId, turnId } = res.body.data!.execute;
    const turn = await t.gql<{ agentSessionTurn: { retrievalPathPrefixes: string[] | null; chunkRefs: { path: string }[] } }>(
      t.token({ userId: alice.userId }),
      TURN,
      { sessionId, turnId },
    );
    return turn.body.data!.agentSessionTurn;
  };

  it('searches everything without a scope', async () => {
    const turn = await ask(null);
    expect(turn.retrievalPathPrefixes).toBeNull();
    const paths = new Set(turn.chunkRefs.map((c) => c.path));
    expect(paths.has('src/billing/invoice.ts')).toBe(true);
    expect(paths.has('src/ui/primitives/button.tsx')).toBe(true);
  });

  it('restricts retrieval to the given path prefixes (whole segments) and stores them with the turn', async () => {
    const upsertsBefore = qdrant?.requestsTo('PUT', /\/points$/).length ?? 0;
    const ui = await ask(['./src/ui/primitives/']);
    expect(ui.retrievalPathPrefixes).toEqual(['src/ui/primitives']);
    expect(ui.chunkRefs.length).toBeGreaterThan(0);
    expect(ui.chunkRefs.every((c) => c.path.startsWith('src/ui/primitives/'))).toBe(true);

    const two = await ask(['src/billing/invoice.ts', 'src/ui/theme.css']);
    expect(new Set(two.chunkRefs.map((c) => c.path))).toEqual(new Set(['src/billing/invoice.ts', 'src/ui/theme.css']));

    // A prefix matches whole segments: "src/u" is no directory.
    expect((await ask(['src/u'])).chunkRefs).toEqual([]);

    if (qdrant) {
      const query = qdrant.requestsTo('POST', /\/points\/query$/).at(-1)!.body as { filter: unknown };
      expect(query.filter).toEqual({
        must: [
          { key: 'repo', match: { value: 'acme/api' } },
          { key: 'pathPrefixes', match: { any: ['src/u'] } },
        ],
      });
      // The scope is request-only: executing never writes points.
      expect(qdrant.requestsTo('PUT', /\/points$/).length).toBe(upsertsBefore);
    }
  });
}

describeWithMysql('scoped retrieval through execute on MariaDB (embedded index)', () => scopedSuite({ mysql: true, qdrant: false }));
describe('scoped retrieval through execute on embedded SQLite (embedded index)', () => scopedSuite({ mysql: false, qdrant: false }));
describe('scoped retrieval through execute on embedded SQLite with Qdrant', () => scopedSuite({ mysql: false, qdrant: true }));
