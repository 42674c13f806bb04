import { createConnection } from 'mysql2/promise';
import type { QueryRunner } from 'typeorm';
import { isGuardFailure, StoreUnavailableError } from './db-errors';
import { dialectOf, type Dialect } from './dialect';
import { StaleReadError, type SqlResult, type SqlTransaction, type SqlValue, type Statement } from './sql';

/** Statements sent to MySQL in one round trip, as one multi-statement query. */
const STATEMENT_SEPARATOR = ';\n';
export const joinStatements = (texts: readonly string[]): string => texts.join(STATEMENT_SEPARATOR);
/** The statements of one call as the statement hook saw it (one, or a multi-statement query's). */
export const statementsOf = (call: string): string[] => call.split(STATEMENT_SEPARATOR);

/**
 * One MySQL transaction on one pooled connection, its statements sent in as few round trips
 * as the work allows: START TRANSACTION rides with the first statement, COMMIT with the last
 * ones (the pool allows multi-statement queries for this; every statement binds its values
 * through placeholders). Whatever fails or throws before the COMMIT rolls back.
 */
export async function mysqlTransaction<T>(runner: QueryRunner, guard: string, work: (tx: SqlTransaction) => Promise<T>): Promise<T> {
  const at: { state: 'new' | 'open' | 'committed' } = { state: 'new' };
  const send = async (statements: readonly Statement[], commit: boolean): Promise<SqlResult[]> => {
    if (at.state === 'committed') throw new Error('the transaction has already committed');
    const texts: string[] = at.state === 'new' ? ['START TRANSACTION'] : [];
    /** Where each statement's result is among the query's results. */
    const resultAt: number[] = [];
    for (const statement of statements) {
      resultAt.push(texts.length);
      texts.push(statement.sql);
      if (statement.mustChangeOneRow) texts.push(guard);
    }
    if (commit) texts.push('COMMIT');
    at.state = 'open';
    const raw: unknown = await runner.query(joinStatements(texts), statements.flatMap((s) => s.params)).catch((e: unknown) => {
      throw isGuardFailure(e) ? new StaleReadError() : e;
    });
    if (commit) at.state = 'committed';
    const all = texts.length === 1 ? [raw] : (raw as unknown[]);
    return resultAt.map((i) => mysqlResult(all[i]));
  };
  try {
    const result = await work({
      async rows<R>(sql: string, params: readonly SqlValue[] = []): Promise<R[]> {
        const [r] = await send([{ sql, params }], false);
        return (r?.rows ?? []) as R[];
      },
      commitWith: (statements) => send(statements, true),
    });
    if (at.state === 'open') await send([], true);
    return result;
  } catch (e) {
    if (at.state === 'open') await runner.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    await runner.release();
  }
}

/**
 * Follows a guarded statement (Statement.mustChangeOneRow) in the same query and fails it
 * with ER_TOO_MANY_ROWS (db-errors.ts isGuardFailure), which stops the multi-statement query
 * before its next statement, unless the statement before changed exactly one row; no round
 * trip of its own. MySQL runs compound statements only inside stored programs, so there two
 * rows selected INTO a variable raise the error; MariaDB runs IF … SIGNAL as a statement,
 * which costs its server about a third of that SELECT (no derived table to materialise).
 */
export const guardFor = (dialect: Dialect): string =>
  dialect === 'mariadb'
    ? "IF ROW_COUNT() <> 1 THEN SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 1172, MESSAGE_TEXT = 'gateway guard'; END IF"
    : 'SELECT 1 FROM (SELECT 1 AS one UNION ALL SELECT 2) AS two WHERE ROW_COUNT() <> 1 INTO @gateway_guard';

/** Statements of one multi-statement read at most: the query text stays small, one slow batch delays few. */
const MAX_BATCH = 32;

interface PendingRead {
  readonly statement: Statement;
  readonly resolve: (rows: unknown[]) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Database.read on MySQL: collects the reads asked for before the current tick ends and
 * sends them as one multi-statement query (the pool allows them; every value is bound
 * through placeholders). The tick, not the event-loop turn: reads from other requests seldom
 * join, so the batch's statement observer (its trace span) stays in the asking request's
 * trace. When a batch fails with anything but an unreachable store, its reads run again one
 * by one, so each caller gets its own statement's answer or error, not a neighbour's.
 */
export class ReadBatcher {
  private pending: PendingRead[] = [];

  /** `query` runs one (multi-)statement query on a pooled connection, its errors typed (Database's facade). */
  constructor(private readonly query: (sql: string, params: unknown[]) => Promise<unknown[]>) {}

  read(sql: string, params: readonly SqlValue[]): Promise<unknown[]> {
    return new Promise((resolve, reject) => {
      // Runs once the pending microtasks have: the reads started side by side (a Promise.all) join.
      if (this.pending.length === 0) process.nextTick(() => this.flush());
      this.pending.push({ statement: { sql, params }, resolve, reject });
    });
  }

  private flush(): void {
    const all = this.pending;
    this.pending = [];
    for (let i = 0; i < all.length; i += MAX_BATCH) void this.send(all.slice(i, i + MAX_BATCH));
  }

  private async send(batch: readonly PendingRead[]): Promise<void> {
    const [only] = batch;
    if (batch.length === 1 && only) {
      await this.query(only.statement.sql, [...only.statement.params]).then(only.resolve, only.reject);
      return;
    }
    let raw: unknown;
    try {
      raw = await this.query(
        joinStatements(batch.map((r) => r.statement.sql)),
        batch.flatMap((r) => r.statement.params),
      );
    } catch (e) {
      if (e instanceof StoreUnavailableError) for (const r of batch) r.reject(e);
      else for (const r of batch) void this.send([r]);
      return;
    }
    const results = raw as unknown[][];
    batch.forEach((r, i) => r.resolve(results[i] ?? []));
  }
}

function mysqlResult(raw: unknown): SqlResult {
  if (Array.isArray(raw)) return { rows: raw, insertId: 0 };
  return { rows: [], insertId: Number((raw as { insertId?: number | string }).insertId ?? 0) };
}

/**
 * `?socketPath=/run/mysqld/mysqld.sock` on DATABASE_URL: a database on the same host, reached
 * through its Unix socket (host and port are then ignored; see README, "MySQL and MariaDB").
 * mysql2 reads it from the URL itself; TypeORM needs it handed over.
 */
export function mysqlSocketPath(url: string): string | null {
  return new URL(url).searchParams.get('socketPath');
}

/** TypeORM wants to know up front whether it talks to MariaDB; the server says so itself. */
export interface MysqlServer {
  readonly dialect: Dialect;
  /** The server writes a statement-based binary log: transactions must stay at REPEATABLE READ (sessionSetupSql). */
  readonly statementBinlog: boolean;
}

export async function probeMysqlServer(url: string, connectTimeout: number): Promise<MysqlServer> {
  const conn = await createConnection({ uri: url, connectTimeout });
  try {
    const [rows] = await conn.query('SELECT VERSION() AS v, @@log_bin AS log_bin, @@binlog_format AS binlog_format');
    const row = (rows as { v: string; log_bin: number | string; binlog_format: string }[])[0];
    const version = String(row?.v ?? '');
    return {
      dialect: dialectOf(version.toLowerCase().includes('mariadb') ? 'mariadb' : 'mysql'),
      statementBinlog: Number(row?.log_bin ?? 0) === 1 && String(row?.binlog_format).toUpperCase() === 'STATEMENT',
    };
  } finally {
    await conn.end();
  }
}
