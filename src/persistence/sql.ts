/** A value a plain statement binds: Dates and booleans are converted for the dialect (see `Sql`). */
export type SqlValue = string | number | boolean | Date | null;

/** One plain statement and its parameters. */
export interface Statement {
  readonly sql: string;
  readonly params: readonly SqlValue[];
  /**
   * An optimistic write's guard (an UPDATE or DELETE, not a statement that returns rows):
   * unless it changes exactly one row, the transaction fails with StaleReadError before any
   * later statement runs, and rolls back.
   */
  readonly mustChangeOneRow?: boolean;
}

/**
 * A guarded statement (Statement.mustChangeOneRow) found its row changed since it was read:
 * nothing of the transaction was kept. The writer falls back to reading under a lock.
 */
export class StaleReadError extends Error {
  constructor() {
    super('the row changed since it was read');
    this.name = 'StaleReadError';
  }
}

/** What one statement returned. */
export interface SqlResult {
  /** A SELECT's rows (or those of a statement with RETURNING); empty for other statements. */
  readonly rows: readonly unknown[];
  /** MySQL: the insert id, which `LAST_INSERT_ID(expr)` sets too; SQLite: the last rowid. */
  readonly insertId: number;
}

/**
 * Plain SQL for the hot write path, written out once (no query builder, no entity
 * hydration): `?` placeholders on both dialects, unquoted identifiers, rows as the driver
 * hands them out (sessions/raw-values.ts reads them). Statements still pass the wrapper every
 * statement passes: typed store errors, the statement observer (metrics, traces), the onQuery
 * hook, and SQLite's prepared-statement cache. Dates are bound as UTC datetime text on SQLite
 * (the format TypeORM writes) and as Dates on MySQL (the pool's timezone is UTC); booleans as 0/1.
 */
export interface Sql {
  rows<R>(statement: string, params?: readonly SqlValue[]): Promise<R[]>;
}

/** A transaction of plain statements (Database.sqlTransaction). */
export interface SqlTransaction extends Sql {
  /**
   * Runs `statements` in order and commits: the transaction's last call. On MySQL they go
   * to the server with the COMMIT in one round trip (a multi-statement query), so the locks
   * they take are held for no round trip at all; on SQLite (in-process) one after another.
   */
  commitWith(statements: readonly Statement[]): Promise<SqlResult[]>;
}
