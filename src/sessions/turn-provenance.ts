import { Brackets, type EntityManager, type EntitySchema } from 'typeorm';
import type { Caller } from '../domain/caller';
import { badInput } from '../domain/errors';
import { assertPageSize, decodeCursor, encodeCursor, malformedCursor, type Page, type PageRequest } from '../domain/pagination';
import type { ActiveFileRef, ChunkRef, TurnRecord } from '../domain/turn';
import type { Database } from '../persistence/database';
import type { SqlValue, Statement } from '../persistence/sql';
import { MAX_REF_KEY, MAX_REF_PATH, type ProvenanceEntities, type TurnChunkRefRow, type TurnFileRefRow } from './provenance.entities';
import { toTurnRecord } from './records';
import { applyVisibility } from './session-query';
import type { SessionEntities, TurnRow } from './session.entities';

export interface TurnPage extends Page<TurnRecord> {
  readonly totalCount: () => Promise<number>;
}

const ORDERING = 'PROVENANCE';
/** Rows per INSERT: well under SQLite's 999 bound parameters. */
const INSERT_BATCH = 100;

/**
 * The statements that write the provenance index rows for refs a turn just gained. The
 * session manager runs them in the transaction that stores the refs. `already` lists what the
 * turn had before (its JSON columns), so nothing is indexed twice.
 */
export function indexTurnRefs(
  turn: Pick<TurnRow, 'id' | 'sessionId' | 'orgId' | 'creationDate'>,
  added: { readonly chunkRefs: readonly ChunkRef[]; readonly activeFileRefs: readonly ActiveFileRef[] },
  already: { readonly chunkRefs: readonly ChunkRef[]; readonly activeFileRefs: readonly ActiveFileRef[] } = {
    chunkRefs: [],
    activeFileRefs: [],
  },
): Statement[] {
  const knownChunks = new Set(already.chunkRefs.map((c) => c.chunkId));
  const knownFiles = new Set([
    ...already.activeFileRefs.map((f) => f.contentHash),
    ...already.chunkRefs.flatMap((c) => (c.fileContentHash ? [c.fileContentHash] : [])),
  ]);
  const chunks = new Map<string, Pick<TurnChunkRefRow, 'chunkId' | 'contentHash'>>();
  const files = new Map<string, Pick<TurnFileRefRow, 'contentHash' | 'path'>>();
  const addFile = (contentHash: string | null | undefined, path: string) => {
    if (!fits(contentHash) || knownFiles.has(contentHash) || files.has(contentHash)) return;
    files.set(contentHash, { contentHash, path: path.slice(0, MAX_REF_PATH) });
  };
  for (const f of added.activeFileRefs) addFile(f.contentHash, f.path);
  for (const c of added.chunkRefs) {
    if (fits(c.chunkId) && fits(c.contentHash) && !knownChunks.has(c.chunkId) && !chunks.has(c.chunkId)) {
      chunks.set(c.chunkId, { chunkId: c.chunkId, contentHash: c.contentHash });
    }
    addFile(c.fileContentHash, c.path);
  }
  const base = [turn.sessionId, turn.orgId, turn.creationDate];
  return [
    ...inserts(CHUNK_REF_INSERT, [...chunks.values()].map((c) => [turn.id, c.chunkId, c.contentHash, ...base])),
    ...inserts(FILE_REF_INSERT, [...files.values()].map((f) => [turn.id, f.contentHash, f.path, ...base])),
  ];
}

/** Refs longer than the index columns cannot be real chunk ids or SHA-256 hashes; they stay out of the index. */
const fits = (value: string | null | undefined): value is string => !!value && value.length <= MAX_REF_KEY;

/** An index table's INSERT, and the statement text for each number of rows (cached: batches are mostly one or two rows). */
interface RefInsert {
  readonly head: string;
  readonly row: string;
  readonly byCount: Map<number, string>;
}

const refInsert = (table: string, columns: readonly string[]): RefInsert => ({
  head: `INSERT INTO ${table} (${columns.join(', ')}) VALUES `,
  row: `(${columns.map(() => '?').join(', ')})`,
  byCount: new Map(),
});

const CHUNK_REF_INSERT = refInsert('turn_chunk_refs', ['turn_id', 'chunk_id', 'content_hash', 'session_id', 'org_id', 'creation_date']);
const FILE_REF_INSERT = refInsert('turn_file_refs', ['turn_id', 'content_hash', 'path', 'session_id', 'org_id', 'creation_date']);

function inserts(insert: RefInsert, rows: SqlValue[][]): Statement[] {
  const statements: Statement[] = [];
  for (let i = 0; i < rows.length; i += INSERT_BATCH) {
    const batch = rows.slice(i, i + INSERT_BATCH);
    let sql = insert.byCount.get(batch.length);
    if (!sql) insert.byCount.set(batch.length, (sql = insert.head + Array.from(batch, () => insert.row).join(', ')));
    statements.push({ sql, params: batch.flat() });
  }
  return statements;
}

/**
 * "Which answers were built on this code?": the turns, visible to the caller under the same
 * rule as their sessions, that retrieved a chunk or used a file version, newest first.
 * Both read an index (org, key, date, turn), never the turns' JSON columns.
 */
export class TurnProvenance {
  constructor(private readonly db: Database<SessionEntities & ProvenanceEntities>) {}

  turnsUsingChunk(caller: Caller, chunkId: string, page: PageRequest): Promise<TurnPage> {
    return this.page(caller, this.db.entities.turnChunkRefs, 'chunkId', requireKey('chunkId', chunkId), page);
  }

  /** Active files with this SHA-256, and retrieved chunks cut from a file with it. */
  turnsUsingFile(caller: Caller, contentHash: string, page: PageRequest): Promise<TurnPage> {
    return this.page(caller, this.db.entities.turnFileRefs, 'contentHash', requireKey('contentHash', contentHash), page);
  }

  private async page(
    caller: Caller,
    index: EntitySchema<TurnChunkRefRow> | EntitySchema<TurnFileRefRow>,
    key: 'chunkId' | 'contentHash',
    value: string,
    page: PageRequest,
  ): Promise<TurnPage> {
    const first = assertPageSize(page.first);
    const base = (em: EntityManager) => {
      const qb = em
        .createQueryBuilder(this.db.entities.turns, 't')
        .innerJoin(index.options.name, 'r', 'r.turnId = t.id')
        .innerJoin(this.db.entities.sessions.options.name, 's', 's.id = r.sessionId')
        .where('r.orgId = :refOrg', { refOrg: caller.orgId })
        .andWhere(`r.${key} = :refKey`, { refKey: value });
      applyVisibility(qb, caller, false);
      return qb;
    };
    let after: { date: Date; turnId: string } | null = null;
    if (page.after !== null) {
      const position = decodeCursor(ORDERING, page.after);
      const date = typeof position.key === 'string' ? new Date(position.key) : new Date(NaN);
      if (Number.isNaN(date.getTime())) throw malformedCursor();
      after = { date, turnId: position.id };
    }
    const rows = await this.db.run((em) => {
      const qb = base(em);
      if (after) {
        const { date, turnId } = after;
        qb.andWhere(
          new Brackets((w) => {
            w.where('r.creationDate < :cursorDate', { cursorDate: date }).orWhere(
              new Brackets((tie) => {
                tie.where('r.creationDate = :cursorDate').andWhere('r.turnId < :cursorTurn', { cursorTurn: turnId });
              }),
            );
          }),
        );
      }
      return qb.orderBy('r.creationDate', 'DESC').addOrderBy('r.turnId', 'DESC').limit(first + 1).getMany();
    });
    const items = rows.slice(0, first).map(toTurnRecord);
    let counted: Promise<number> | null = null;
    return {
      items,
      cursorOf: (t) => encodeCursor(ORDERING, { key: t.creationDate.toISOString(), id: t.id }),
      hasNextPage: rows.length > first,
      totalCount: () => (counted ??= this.db.run((em) => base(em).getCount())),
    };
  }
}

function requireKey(argument: string, value: string): string {
  if (value.length === 0 || value.length > MAX_REF_KEY) {
    throw badInput(`${argument} must be between 1 and ${MAX_REF_KEY} characters`, { argument });
  }
  return value;
}
