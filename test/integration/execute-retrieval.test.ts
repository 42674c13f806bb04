import { createLogger } from '../../src/logger';
import { physicalCollection } from '../../src/retrieval/collection';
import { createRetrieval } from '../../src/retrieval/create-retrieval';
import { ingestTree } from '../../src/retrieval/ingest';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai';
import { describeWithMysql } from '../support/services';
import { removeTree, SAMPLE_CODE, writeTree } from '../support/source-tree';
import { alice, boss, EXECUTE, startGateway, userTextOf, type TestGateway } from '../support/testkit';

interface Final {
  execute: { sessionId: string; turnId: string; primaryOutputText: string; userWarnings: string[] | null };
}

/** Execute with the configured retrieval (OpenAI embeddings from the stand-in, the embedded index), not a scripted one. */
describeWithMysql('execute with the configured retrieval on MariaDB', () => {
  let fake: FakeOpenAI;
  let t: TestGateway;
  let root: string;
  let agentContextId: string;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    t = await startGateway({ database: 'mysql', provider: fake });
    const agent = await t.gateway.services.contexts.upsertAgentContext(boss, { name: 'Billing', vectorCollection: 'billing', defaultModel: 'gpt-4.1-mini' });
    agentContextId = agent.id;
    root = writeTree(SAMPLE_CODE);
    const retrieval = createRetrieval(t.gateway.config, createLogger('silent'));
    try {
      await ingestTree(retrieval, { root, repo: 'acme/api', collection: physicalCollection(true, 'acme', 'billing') });
    } finally {
      await retrieval.close();
    }
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
    removeTree(root);
  });

  it('sends the retrieved snippets on the first turn, records their refs, and does not send them again in the live chain', async () => {
    const token = t.token({ userId: alice.userId });
    fake.requests.length = 0;
    const first = await t.gql<Final>(token, EXECUTE, { input: { agentContextId, instruction: 'Where is parseInvoiceTotal defined and who calls it?', repo: 'acme/api' } });
    const answer = first.body.data!.execute;
    expect(answer.userWarnings).toBeNull();
    const sent = userTextOf(fake.requests.find((r) => r.body.stream === true)!.body);
    expect(sent).toContain('## Retrieved context');
    expect(sent).toContain('export function parseInvoiceTotal');
    const turn = await t.gateway.services.sessions.getTurn(alice, answer.sessionId, answer.turnId);
    expect(turn!.chunkRefs.length).toBeGreaterThan(0);
    expect(turn!.chunkRefs.map((c) => c.path)).toContain('src/billing/invoice.ts');

    fake.requests.length = 0;
    await t.gql<Final>(token, EXECUTE, { input: { agentContextId, sessionId: answer.sessionId, instruction: 'Where is parseInvoiceTotal defined and who calls it?' } });
    const again = userTextOf(fake.requests.find((r) => r.body.stream === true)!.body);
    expect(again).not.toContain('## Retrieved context');
  });

  it('warns, and still answers, when the agent context was never indexed', async () => {
    const other = await t.gateway.services.contexts.upsertAgentContext(boss, { name: 'Empty', vectorCollection: 'empty', defaultModel: 'gpt-4.1-mini' });
    const res = await t.gql<Final>(t.token({ userId: alice.userId }), EXECUTE, { input: { agentContextId: other.id, instruction: 'Anything?' } });
    expect(res.body.data!.execute.userWarnings?.[0]).toMatch(/^Repository search was unavailable \(vector collection .* has not been indexed yet\)/);
  });
});
