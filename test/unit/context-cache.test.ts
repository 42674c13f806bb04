import { ContextCache } from '../../src/contexts/context-cache';
import type { ContextLookup } from '../../src/contexts/context-directory.port';
import type { AgentContextRecord } from '../../src/domain/contexts';

const agent = (orgId: string, id: string, defaultModel: string): AgentContextRecord => ({
  id,
  orgId,
  name: id,
  description: null,
  vectorCollection: 'code',
  defaultModel,
});

/** A lookup over rows the test changes, counting its reads. */
function cacheOver(rows: Map<string, AgentContextRecord>) {
  let clock = 0;
  const reads: string[][] = [];
  const inner: ContextLookup = {
    agentContextsByIds: async (orgId, ids) => {
      reads.push([...ids]);
      return ids.map((id) => rows.get(id)).filter((r): r is AgentContextRecord => r?.orgId === orgId);
    },
    conversationContextsByIds: async () => [],
  };
  const cache = new ContextCache(inner, { ttlMs: 1_000, clock: () => clock });
  return { cache, reads, advance: (ms: number) => (clock += ms) };
}

describe('the contexts executes resolve', () => {
  it('reads a found context once per TTL and per org, and never keeps a missing one', async () => {
    const rows = new Map([['a1', agent('acme', 'a1', 'gpt-4.1-mini')]]);
    const { cache, reads, advance } = cacheOver(rows);
    expect(await cache.agentContextsByIds('acme', ['a1'])).toEqual([rows.get('a1')]);
    expect(await cache.agentContextsByIds('acme', ['a1'])).toEqual([rows.get('a1')]);
    expect(await cache.agentContextsByIds('other', ['a1'])).toEqual([]);
    expect(await cache.agentContextsByIds('acme', ['a2'])).toEqual([]);
    rows.set('a2', agent('acme', 'a2', 'gpt-4.1'));
    expect(await cache.agentContextsByIds('acme', ['a2'])).toEqual([rows.get('a2')]);
    expect(reads).toEqual([['a1'], ['a1'], ['a2'], ['a2']]);
    rows.set('a1', agent('acme', 'a1', 'gpt-4.1'));
    advance(1_001);
    expect((await cache.agentContextsByIds('acme', ['a1']))[0]?.defaultModel).toBe('gpt-4.1');
  });

  it('reads an org again at once after a change made here, and keeps nothing a read begun before it found', async () => {
    const rows = new Map([['a1', agent('acme', 'a1', 'gpt-4.1-mini')]]);
    const { cache, reads } = cacheOver(rows);
    await cache.agentContextsByIds('acme', ['a1']);
    const during = cache.agentContextsByIds('acme', ['a1']);
    expect(reads).toHaveLength(1);
    rows.set('a1', agent('acme', 'a1', 'gpt-4.1'));
    cache.changed('acme');
    await during;
    const pending = cache.agentContextsByIds('acme', ['a1']);
    cache.changed('acme');
    await pending;
    expect((await cache.agentContextsByIds('acme', ['a1']))[0]?.defaultModel).toBe('gpt-4.1');
    expect(reads).toHaveLength(3);
  });
});
