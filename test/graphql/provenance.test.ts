import type { Caller } from '../../src/domain/caller';
import type { ActiveFileRef, ChunkRef, TurnRecord } from '../../src/domain/turn';
import { describeWithMysql } from '../support/services';
import { alice, bob, boss, mallory, startGateway, type TestGateway } from '../support/testkit';

const QUERY = `query Provenance($chunkId: ID!, $first: Int, $after: String) {
  turnsUsingChunk(chunkId: $chunkId, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { cursor node { id sessionId instructionSummary creationDate chunkRefs { chunkId path contentHash fileContentHash } session { id } } }
  }
}`;
const BY_FILE = `query ByFile($hash: String!, $first: Int, $after: String) {
  turnsUsingFile(contentHash: $hash, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node { id instructionSummary } }
  }
}`;

interface Connection {
  totalCount: number;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  edges: { cursor?: string; node: { id: string; instructionSummary: string; creationDate?: string; chunkRefs?: { chunkId: string; fileContentHash: string | null }[] } }[];
}

const CHUNK = '5d2f3c1e-8a7b-5c4d-9e0f-1a2b3c4d5e6f';
const OTHER_CHUNK = '0a1b2c3d-4e5f-5a6b-8c7d-8e9f0a1b2c3d';
const FILE_HASH = 'a'.repeat(64);
const CHUNK_FILE_HASH = 'b'.repeat(64);

const chunk = (chunkId: string, fileContentHash: string | null = null): ChunkRef => ({
  chunkId,
  path: 'src/billing/invoice.ts',
  startLine: 1,
  endLine: 60,
  contentHash: 'c'.repeat(64),
  score: 0.8,
  fileContentHash,
});
const activeFile = (contentHash: string): ActiveFileRef => ({
  path: 'src/billing/invoice.ts',
  contentHash,
  sizeBytes: 1200,
  isTouched: true,
  wasSentToLLM: true,
  wasTooLargeToSend: false,
});

function provenanceSuite(database: 'sqlite' | 'mysql'): void {
  let t: TestGateway;
  const tokenOf = (c: Caller) =>
    t.token({ userId: c.userId, userName: c.userName, orgId: c.orgId, orgName: c.orgName, roles: [...c.roles] });
  const turns: Record<string, TurnRecord> = {};

  beforeAll(async () => {
    t = await startGateway({ database });
    const sessions = t.gateway.sessions.lifecycle;
    // Creation order is the order provenance lists read back (newest first); keep dates apart.
    const step = () => new Promise((r) => setTimeout(r, 5));
    const own = await sessions.createSession(alice, { name: 'alice private', agentContextId: 'ac' });
    turns.first = await sessions.addTurn(alice, own.id, {
      instructionSummary: 'first',
      chunkRefs: [chunk(CHUNK)],
      activeFileRefs: [activeFile(FILE_HASH)],
    });
    await sessions.failTurn(alice, own.id, turns.first.id, { errors: ['boom'] });
    await step();
    turns.second = await sessions.addTurn(alice, own.id, {
      instructionSummary: 'second',
      chunkRefs: [chunk(CHUNK, CHUNK_FILE_HASH), chunk(OTHER_CHUNK, CHUNK_FILE_HASH), chunk(CHUNK, CHUNK_FILE_HASH)],
    });
    await sessions.failTurn(alice, own.id, turns.second.id, { errors: ['boom'] });
    await step();
    const bobsPrivate = await sessions.createSession(bob, { name: 'bob private', agentContextId: 'ac' });
    turns.bobPrivate = await sessions.addTurn(bob, bobsPrivate.id, { instructionSummary: 'bob private', chunkRefs: [chunk(CHUNK)] });
    await step();
    const bobsPublic = await sessions.createSession(bob, { name: 'bob public', agentContextId: 'ac', isPublic: true });
    turns.bobPublic = await sessions.addTurn(bob, bobsPublic.id, {
      instructionSummary: 'bob public',
      activeFileRefs: [activeFile(FILE_HASH)],
    });
    // Retrieval records its chunks on the PENDING turn after creating it.
    await sessions.recordChunkRefs(bob, bobsPublic.id, turns.bobPublic.id, [chunk(CHUNK)]);
    await sessions.recordChunkRefs(bob, bobsPublic.id, turns.bobPublic.id, [chunk(CHUNK), chunk(CHUNK)]);
    await step();
    const doomed = await sessions.createSession(alice, { name: 'deleted', agentContextId: 'ac' });
    turns.deleted = await sessions.addTurn(alice, doomed.id, { instructionSummary: 'deleted', chunkRefs: [chunk(CHUNK)] });
    await sessions.deleteSession(alice, doomed.id);
    const foreign = await sessions.createSession(mallory, { name: 'globex', agentContextId: 'ac' });
    turns.foreign = await sessions.addTurn(mallory, foreign.id, {
      instructionSummary: 'globex',
      chunkRefs: [chunk(CHUNK)],
      activeFileRefs: [activeFile(FILE_HASH)],
    });
  });
  afterAll(() => t.close());

  async function list(caller: Caller, query: string, variables: Record<string, unknown>, key: string): Promise<Connection> {
    const res = await t.gql<Record<string, Connection>>(tokenOf(caller), query, variables);
    expect(res.body.errors).toBeUndefined();
    return res.body.data![key]!;
  }
  const summaries = (c: Connection) => c.edges.map((e) => e.node.instructionSummary);

  it('lists the turns that retrieved a chunk, newest first, as far as the caller may see them', async () => {
    const mine = await list(alice, QUERY, { chunkId: CHUNK }, 'turnsUsingChunk');
    // Bob's private session and alice's deleted one are out of her view; globex is another org.
    expect(summaries(mine)).toEqual(['bob public', 'second', 'first']);
    expect(mine.totalCount).toBe(3);
    expect(mine.edges[1]!.node.chunkRefs).toEqual([
      { chunkId: CHUNK, path: 'src/billing/invoice.ts', contentHash: 'c'.repeat(64), fileContentHash: CHUNK_FILE_HASH },
      { chunkId: OTHER_CHUNK, path: 'src/billing/invoice.ts', contentHash: 'c'.repeat(64), fileContentHash: CHUNK_FILE_HASH },
      { chunkId: CHUNK, path: 'src/billing/invoice.ts', contentHash: 'c'.repeat(64), fileContentHash: CHUNK_FILE_HASH },
    ]);

    expect(summaries(await list(bob, QUERY, { chunkId: CHUNK }, 'turnsUsingChunk'))).toEqual(['bob public', 'bob private']);
    expect(summaries(await list(boss, QUERY, { chunkId: CHUNK }, 'turnsUsingChunk'))).toEqual([
      'bob public',
      'bob private',
      'second',
      'first',
    ]);
    expect(summaries(await list(mallory, QUERY, { chunkId: CHUNK }, 'turnsUsingChunk'))).toEqual(['globex']);
    expect(summaries(await list(alice, QUERY, { chunkId: OTHER_CHUNK }, 'turnsUsingChunk'))).toEqual(['second']);
  });

  it('records a chunk added to a pending turn once, however often retrieval reports it', async () => {
    const res = await t.gql<{ agentSessionTurn: { chunkRefs: { chunkId: string }[] } }>(
      tokenOf(bob),
      `query($s: ID!, $t: ID!) { agentSessionTurn(sessionId: $s, turnId: $t) { chunkRefs { chunkId } } }`,
      { s: turns.bobPublic!.sessionId, t: turns.bobPublic!.id },
    );
    expect(res.body.data?.agentSessionTurn.chunkRefs).toEqual([{ chunkId: CHUNK }]);
  });

  it('pages through the turns with cursors, without gaps or repeats', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const page: Connection = await list(boss, QUERY, { chunkId: CHUNK, first: 1, after }, 'turnsUsingChunk');
      seen.push(...summaries(page));
      pages++;
      expect(page.totalCount).toBe(4);
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(pages).toBe(4);
    expect(seen).toEqual(['bob public', 'bob private', 'second', 'first']);
  });

  it('finds turns by file version: active files and chunks cut from that file', async () => {
    expect(summaries(await list(alice, BY_FILE, { hash: FILE_HASH }, 'turnsUsingFile'))).toEqual(['bob public', 'first']);
    expect(summaries(await list(alice, BY_FILE, { hash: CHUNK_FILE_HASH }, 'turnsUsingFile'))).toEqual(['second']);
    expect(summaries(await list(mallory, BY_FILE, { hash: FILE_HASH }, 'turnsUsingFile'))).toEqual(['globex']);
    expect(summaries(await list(mallory, BY_FILE, { hash: CHUNK_FILE_HASH }, 'turnsUsingFile'))).toEqual([]);
    const none = await list(alice, BY_FILE, { hash: 'd'.repeat(64) }, 'turnsUsingFile');
    expect(none).toEqual({ totalCount: 0, pageInfo: { hasNextPage: false, endCursor: null }, edges: [] });
  });

  it('refuses an empty key, an oversized page and a malformed cursor as bad input', async () => {
    for (const variables of [{ chunkId: '' }, { chunkId: CHUNK, first: 101 }, { chunkId: CHUNK, after: 'bm90LWEtY3Vyc29y' }]) {
      const res = await t.gql(tokenOf(alice), QUERY, variables);
      expect(res.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
  });

  it('reads the index, not the JSON columns of the turns', async () => {
    t.statements.length = 0;
    await list(alice, QUERY, { chunkId: CHUNK }, 'turnsUsingChunk');
    const select = t.statements.find((s) => s.includes('turn_chunk_refs'));
    expect(select).toBeDefined();
    expect(select).not.toMatch(/chunk_refs["`]?\s+LIKE/i);
    const placeholders = (select!.match(/\?/g) ?? []).length;
    const db = t.gateway.db.dataSource;
    if (db.options.type === 'better-sqlite3') {
      const plan = await db.query<{ detail: string }[]>(`EXPLAIN QUERY PLAN ${select}`, Array(placeholders).fill('x'));
      expect(plan.map((p) => p.detail).join('\n')).toMatch(/USING (COVERING )?INDEX idx_turn_chunk_refs_org_chunk/);
    } else {
      const plan = await db.query<{ table: string; key: string | null }[]>(`EXPLAIN ${select}`, Array(placeholders).fill('x'));
      expect(plan.find((p) => p.table === 'r')?.key).toBe('idx_turn_chunk_refs_org_chunk');
    }
  });
}

describe('provenance queries on embedded SQLite', () => provenanceSuite('sqlite'));
describeWithMysql('provenance queries on MySQL/MariaDB', () => provenanceSuite('mysql'));
