import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { StaleReadError, type SqlResult, type SqlTransaction, type SqlValue, type Statement } from './sql';

/** Plain-statement transactions grouped under one COMMIT at most. */
const MAX_GROUP = 32;

/** What the writer runs: a plain-statement transaction (grouped), an ORM transaction (alone), or the open group's COMMIT. */
type Job =
  | { readonly kind: 'grouped'; readonly work: () => Promise<unknown>; readonly resolve: (value: unknown) => void; readonly reject: (e: unknown) => void }
  | { readonly kind: 'alone'; readonly run: () => Promise<void> }
  | { readonly kind: 'commit'; readonly done?: () => void };

/** A grouped transaction that has done its work: it hears how the shared COMMIT went. */
interface Member {
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
}

/**
 * The embedded database's one writer. SQLite has one connection here, so its transactions run
 * one after another; plain-statement transactions that queue up behind each other (while one
 * runs others are asked for, as each of its statements is an await) share one COMMIT (group
 * commit). A COMMIT writes every page the transaction dirtied to the WAL, and a turn's
 * transactions dirty mostly the same pages (the turns, events and sessions tables' last leaves
 * and the event counter), so a shared COMMIT writes them once. Each grouped transaction but the
 * group's first runs in its own savepoint, so one that fails rolls back alone (the first fails
 * before any other has joined); each caller hears of its success only once the shared COMMIT
 * is done, so nothing is reported, or published, before it is durable. ORM transactions
 * (TypeORM's EntityManager) run alone, after the open group has committed.
 */
export class SqliteWriter<Tx> {
  private readonly jobs: Job[] = [];
  private running = false;
  /** Members of the open transaction; null when none is open. */
  private group: Member[] | null = null;

  /** `tx` is what grouped work runs its statements through (on `runner`, the one connection). */
  constructor(
    private readonly runner: QueryRunner,
    private readonly tx: Tx,
    private readonly ormTransaction: <T>(work: (em: EntityManager) => Promise<T>) => Promise<T>,
  ) {}

  /** Runs `work` in the next group; resolves once that group has committed. */
  grouped<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.jobs.push({ kind: 'grouped', work: () => work(this.tx), resolve: resolve as (value: unknown) => void, reject });
      void this.drain();
    });
  }

  /** Runs `work` in a transaction of its own. */
  alone<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.jobs.push({ kind: 'alone', run: () => this.ormTransaction(work).then(resolve, reject) });
      void this.drain();
    });
  }

  /** Resolves once everything asked for so far has committed (or failed): before the database closes. */
  settled(): Promise<void> {
    return new Promise((done) => {
      this.jobs.push({ kind: 'commit', done });
      void this.drain();
    });
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (;;) {
        const job = this.jobs.shift();
        if (!job) {
          // Nothing waits: the group commits (what is asked for meanwhile waits for the next one).
          if (!this.group) break;
          await this.commit();
        } else if (job.kind === 'grouped') {
          await this.join(job);
          if (this.group && this.group.length >= MAX_GROUP) await this.commit();
        } else {
          await this.commit();
          if (job.kind === 'alone') await job.run();
          else job.done?.();
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async join(job: Extract<Job, { kind: 'grouped' }>): Promise<void> {
    const first = this.group === null;
    let result: unknown;
    try {
      // TypeORM's runner begins at depth 0 and opens a savepoint deeper down; commit releases it, rollback returns to it.
      await this.runner.startTransaction();
      this.group ??= [];
      result = await job.work();
      if (!first) await this.runner.commitTransaction();
    } catch (e) {
      await this.runner.rollbackTransaction().catch(() => undefined);
      if (first) this.group = null;
      job.reject(e);
      return;
    }
    this.group?.push({ resolve: () => job.resolve(result), reject: job.reject });
  }

  private async commit(): Promise<void> {
    const members = this.group;
    if (!members) return;
    this.group = null;
    try {
      await this.runner.commitTransaction();
    } catch (e) {
      await this.runner.rollbackTransaction().catch(() => undefined);
      for (const m of members) m.reject(e);
      return;
    }
    for (const m of members) m.resolve();
  }
}

/** SQLite's datetime text as TypeORM writes it: `YYYY-MM-DD HH:MM:SS.SSS`, UTC. */
const sqliteDate = (d: Date): string => d.toISOString().slice(0, 23).replace('T', ' ');

export const bindSqlite = (params: readonly SqlValue[]): unknown[] =>
  params.map((p) => (p instanceof Date ? sqliteDate(p) : typeof p === 'boolean' ? (p ? 1 : 0) : p));

/** What TypeORM's SQLite query runner hands back for a structured result. */
interface SqliteRunnerResult {
  readonly records: unknown[];
  readonly raw: unknown;
  /** Rows a statement that returns none changed. */
  readonly affected?: number;
}

export function sqliteWriter(dataSource: DataSource): SqliteWriter<SqlTransaction> {
  // better-sqlite3 hands out the same runner (its one connection) every time.
  const runner = dataSource.createQueryRunner();
  return new SqliteWriter(runner, sqliteTransaction(runner), (work) => dataSource.transaction(work));
}

/** Inside the transaction the writer opened (it begins, commits and rolls back). */
function sqliteTransaction(runner: QueryRunner): SqlTransaction {
  const exec = async (statement: Statement): Promise<SqlResult> => {
    const result = (await runner.query(statement.sql, bindSqlite(statement.params), true)) as SqliteRunnerResult;
    if (statement.mustChangeOneRow && result.affected !== 1) throw new StaleReadError();
    return { rows: result.records, insertId: Number(result.raw ?? 0) };
  };
  return {
    async rows<R>(sql: string, params: readonly SqlValue[] = []): Promise<R[]> {
      return (await exec({ sql, params })).rows as R[];
    },
    async commitWith(statements: readonly Statement[]): Promise<SqlResult[]> {
      const results: SqlResult[] = [];
      for (const statement of statements) results.push(await exec(statement));
      return results;
    },
  };
}
