import { createHash } from 'node:crypto';
import { seededRandom } from '../domain/seeded-random';
import type { Database } from '../persistence/database';
import type { Statement, SqlValue } from '../persistence/sql';

export interface BulkSeedOptions {
  readonly orgId: string;
  readonly orgName: string;
  readonly users: number;
  /** How many sessions to write in bulk (the history before the lifecycle-written newest ones). */
  readonly sessions: number;
  /** Participants per session, the owner included: an integer between the two, inclusive. */
  readonly participants: readonly [number, number];
  readonly publicShare: number;
  readonly deletedShare: number;
  readonly randomSeed: number;
  readonly agentContextIds: readonly string[];
  readonly conversationContextIds: readonly string[];
  /** The history ends here and starts a year before. */
  readonly until: Date;
}

const YEAR_MS = 365 * 24 * 3600 * 1000;
const TOPICS = ['auth middleware', 'billing export', 'session list view', 'button variants', 'rate limiter', 'search index', 'token refresh', 'color tokens', 'audit log', 'retry policy'];
const VERBS = ['Refactor', 'Fix', 'Document', 'Speed up', 'Review', 'Test'];
const REPOS = ['acme/api', 'acme/web', 'acme/design-system'];
/** One session in this many mentions it: what a search for a rare word finds (bench:scale). */
export const RARE_WORD = 'quokka';
const RARE_EVERY = 100_003;
/**
 * Sessions per transaction: large, so that each user's participant rows of a transaction
 * (written in user order) fill the same index pages instead of reading one each; with
 * MariaDB's default 128 MB buffer pool 1,000,000 sessions took 397 s at 2,000 a transaction
 * and 190 s at 100,000; 167 s with the next transaction's rows built while one is written
 * (docs/performance.md). Rows per INSERT: SQLite binds at most 32,766 parameters.
 */
const SESSIONS_PER_TRANSACTION = 100_000;
const SESSION_ROWS_PER_INSERT = 400;
/** Sessions built between two yields to the transaction being written. */
const BUILD_SLICE = 2_000;
const PARTICIPANT_ROWS_PER_INSERT = 1_000;

/**
 * The id of seeded session `index` of an org (bulk or newest): the same on every run, so a
 * second run writes nothing twice. UUID-shaped, and ascending with the index: InnoDB appends
 * each new row to its primary key instead of splitting pages all over it (random ids made a
 * large seed much slower: docs/performance.md).
 */
export function seededSessionId(orgId: string, kind: 'bulk' | 'newest', index: number): string {
  const h = createHash('sha1').update(`${orgId}\u0000${kind}`).digest('hex');
  const n = index.toString(16).padStart(16, '0');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${n.slice(0, 4)}-${n.slice(4, 8)}-${n.slice(8, 16)}${h.slice(12, 16)}`;
}

const SESSION_COLUMNS = [
  'id', 'org_id', 'org_name', 'owner_user_id', 'owner_user_name', 'name', 'session_key', 'description', 'is_public', 'is_draft',
  'is_deleted', 'category', 'creation_date', 'last_updated_date', 'agent_context_id', 'conversation_context_id', 'workspace_id',
  'repo', 'default_language', 'turn_count', 'last_turn_status', 'last_turn_date', 'input_tokens', 'output_tokens',
  'cached_input_tokens', 'estimated_cost_usd', 'usage_estimated',
] as const;
/** With the copies of the session's keys the rows carry (ParticipantLists1765400000000): written here, the trigger does not look the session up. */
const PARTICIPANT_COLUMNS = ['session_id', 'user_id', 'org_id', 'user_name', 'joined_date', 'is_deleted', 'creation_date', 'last_updated_date', 'name'] as const;

/**
 * A year of an org's sessions in multi-row INSERTs, oldest first, a few thousand per
 * transaction. Every column is what the gateway would hold for a session created and never
 * run: no turns (turn_count 0, no last turn, zero usage), the owner among its participants,
 * the other participants joined at creation. Rows that exist already are skipped (INSERT
 * IGNORE / OR IGNORE on the deterministic ids), so running it twice changes nothing.
 */
export async function bulkSeedSessions(db: Database, o: BulkSeedOptions, progress: (done: number) => void = () => undefined): Promise<number> {
  const random = seededRandom(o.randomSeed);
  const ignore = db.dialect === 'sqlite' ? 'INSERT OR IGNORE' : 'INSERT IGNORE';
  const start = o.until.getTime() - YEAR_MS;
  /** The rows of sessions `from` up to `to`, as INSERTs; it yields now and then, so that the transaction before it goes on meanwhile. */
  const batch = async (from: number, to: number): Promise<Statement[]> => {
    const sessions: SqlValue[][] = [];
    const participants: SqlValue[][] = [];
    for (let i = from; i < to; i++) {
      if ((i - from) % BUILD_SLICE === BUILD_SLICE - 1) await new Promise<void>((resolve) => setImmediate(resolve));
      const id = seededSessionId(o.orgId, 'bulk', i);
      const ownerNo = 1 + Math.floor(random() * o.users);
      const created = new Date(start + (i / o.sessions) * YEAR_MS);
      const updated = new Date(Math.min(o.until.getTime(), created.getTime() + Math.floor(random() * 3 * 24 * 3600 * 1000)));
      const topic = TOPICS[i % TOPICS.length] as string;
      const which = i % o.agentContextIds.length;
      const description = i % RARE_EVERY === 7 ? `Seeded session with a ${RARE_WORD} in it` : random() < 0.5 ? `Seeded session about the ${topic}` : null;
      const name = `${VERBS[i % VERBS.length]} ${topic} #${i + 1}`;
      const deleted = random() < o.deletedShare ? 1 : 0;
      sessions.push([
        id, o.orgId, o.orgName, `user-${ownerNo}`, `User ${ownerNo}`, name, null, description,
        random() < o.publicShare ? 1 : 0, 0, deleted, 'maintenance', created, updated,
        o.agentContextIds[which] as string, o.conversationContextIds[which % o.conversationContextIds.length] ?? null,
        `user-${ownerNo}.laptop`, REPOS[i % REPOS.length] as string, 'typescript', 0, null, null, 0, 0, 0, null, 0,
      ]);
      const [min, max] = o.participants;
      const wanted = Math.min(o.users, min + Math.floor(random() * (max - min + 1)));
      const members = new Set([ownerNo]);
      while (members.size < wanted) members.add(1 + Math.floor(random() * o.users));
      for (const n of members) participants.push([id, `user-${n}`, o.orgId, `User ${n}`, created, deleted, created, updated, name]);
    }
    // By user and name: the participant indexes (and counters) start with the user, so the
    // transaction's rows of one user land together there (in name order, for the name index
    // that leaves nowhere near the end) instead of each on a page of its own.
    participants.sort((a, b) => byText(a[1], b[1]) || byText(a[8], b[8]));
    return [
      ...inserts(`${ignore} INTO agent_sessions`, SESSION_COLUMNS, sessions, SESSION_ROWS_PER_INSERT),
      ...inserts(`${ignore} INTO agent_session_participants`, PARTICIPANT_COLUMNS, participants, PARTICIPANT_ROWS_PER_INSERT),
    ];
  };
  let written = 0;
  let next = batch(0, Math.min(o.sessions, SESSIONS_PER_TRANSACTION));
  for (let from = 0; from < o.sessions; from += SESSIONS_PER_TRANSACTION) {
    const statements = await next;
    const to = Math.min(o.sessions, from + SESSIONS_PER_TRANSACTION);
    // The next transaction's rows are built while this one is written (between its round trips), in the same order as ever.
    next = batch(to, Math.min(o.sessions, to + SESSIONS_PER_TRANSACTION));
    // A query per statement: the whole transaction in one would pass MariaDB's default max_allowed_packet (16 MB).
    await db.sqlTransaction(async (tx) => {
      for (const statement of statements) await tx.rows(statement.sql, statement.params);
      await tx.commitWith([]);
    });
    written += to - from;
    progress(written);
  }
  await next;
  return written;
}

const byText = (a: SqlValue | undefined, b: SqlValue | undefined): number => (String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0);

function inserts(head: string, columns: readonly string[], rows: readonly SqlValue[][], perStatement: number): Statement[] {
  const row = `(${columns.map(() => '?').join(', ')})`;
  const out: Statement[] = [];
  for (let i = 0; i < rows.length; i += perStatement) {
    const chunk = rows.slice(i, i + perStatement);
    out.push({ sql: `${head} (${columns.join(', ')}) VALUES ${chunk.map(() => row).join(', ')}`, params: chunk.flat() });
  }
  return out;
}
