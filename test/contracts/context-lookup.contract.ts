import type { ContextLookup } from '../../src/contexts/context-directory.port';
import type { Caller } from '../../src/domain/caller';
import type { AgentContextDraft, AgentContextRecord, ConversationContextDraft, ConversationContextRecord } from '../../src/domain/contexts';
import { boss, globexAdmin } from '../support/testkit/users';

export interface ContextLookupSubject {
  readonly lookup: ContextLookup;
  /** Puts a context into the adapter as an admin of `caller`'s org would. */
  addAgent(caller: Caller, draft: AgentContextDraft): Promise<AgentContextRecord>;
  addConversation(caller: Caller, draft: ConversationContextDraft): Promise<ConversationContextRecord>;
  dispose(): Promise<void>;
}

/** What the orchestrator needs of every context directory (context-directory.port.ts). */
export function contextLookupContract(open: () => Promise<ContextLookupSubject>): void {
  let subject: ContextLookupSubject;
  beforeAll(async () => {
    subject = await open();
  });
  afterAll(() => subject.dispose());

  it("finds an org's agent contexts by id, and never another org's or unknown ids", async () => {
    const backend = await subject.addAgent(boss, { name: 'Backend', vectorCollection: 'backend', defaultModel: 'gpt-4.1-mini' });
    const web = await subject.addAgent(boss, { name: 'Web', description: 'the dashboard', vectorCollection: 'web', defaultModel: 'gpt-4.1' });
    const foreign = await subject.addAgent(globexAdmin, { name: 'Globex', vectorCollection: 'globex', defaultModel: 'gpt-4.1-mini' });
    const found = await subject.lookup.agentContextsByIds('acme', [web.id, foreign.id, 'no-such-context', backend.id]);
    expect([...found].sort((a, b) => a.name.localeCompare(b.name))).toEqual([backend, web]);
    expect(found.find((c) => c.id === web.id)).toMatchObject({ orgId: 'acme', description: 'the dashboard', vectorCollection: 'web', defaultModel: 'gpt-4.1' });
    expect(await subject.lookup.agentContextsByIds('globex', [backend.id])).toEqual([]);
    expect(await subject.lookup.agentContextsByIds('acme', [])).toEqual([]);
  });

  it("finds an org's conversation contexts by id, with their prompt, sampling and tools intact", async () => {
    const tools = [{ name: 'read_file', description: 'Reads a file', parametersJson: '{"type":"object","properties":{"path":{"type":"string"}}}' }];
    const refactor = await subject.addConversation(boss, { name: 'Refactor', systemPrompt: 'Be careful.', model: 'gpt-4.1', temperature: 0.3, tools });
    const foreign = await subject.addConversation(globexAdmin, { name: 'Globex', systemPrompt: 'Globex rules.' });
    expect(await subject.lookup.conversationContextsByIds('acme', [refactor.id, foreign.id])).toEqual([
      { id: refactor.id, orgId: 'acme', name: 'Refactor', description: null, systemPrompt: 'Be careful.', model: 'gpt-4.1', temperature: 0.3, tools },
    ]);
    expect(await subject.lookup.conversationContextsByIds('globex', [foreign.id])).toMatchObject([{ name: 'Globex', tools: [], model: null, temperature: null }]);
  });
}
