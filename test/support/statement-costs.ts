import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createConnection } from 'mysql2/promise';
import { bindSqlite } from '../../src/persistence/sqlite-writer';
import type { ListRunner, ListStatement } from '../../src/sessions/session-list';
import { paramsOf } from '../../src/sessions/session-query';

/** What one statement of a list read. */
export interface StatementCost {
  readonly sql: string;
  /** MySQL/MariaDB: handler reads (index entries and rows; not the work inside InnoDB's full-text index). */
  readonly reads: number;
  /** SQLite: EXPLAIN QUERY PLAN, one line per step. */
  readonly plan: string;
}

/**
 * Runs the list statements `work` asks for (sessions/session-list.ts `readList`) as the gateway
 * does, but one after another on a connection of its own (the status counters are the
 * connection's), and hands back each with what it read. `url` null: the embedded database under
 * `dataDir`, opened read-only.
 */
export async function statementCosts(url: string | null, dataDir: string, work: (run: ListRunner) => Promise<unknown>): Promise<StatementCost[]> {
  const sqlite = url ? null : new Database(join(dataDir, 'gateway.sqlite'), { readonly: true });
  const conn = url ? await createConnection({ uri: url, timezone: 'Z' }) : null;
  const seen: StatementCost[] = [];
  const measure = async (s: ListStatement): Promise<unknown[]> => {
    const [text, params] = positional(s);
    if (sqlite) {
      const values = bindSqlite(params);
      const plan = (sqlite.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...values) as { detail: string }[]).map((r) => r.detail).join('\n');
      seen.push({ sql: s.sql, reads: 0, plan });
      return sqlite.prepare(text).all(...values);
    }
    const c = conn!;
    await c.query('FLUSH STATUS');
    const [rows] = await c.query(text, params);
    const [status] = await c.query("SHOW SESSION STATUS LIKE 'Handler_read%'");
    seen.push({ sql: s.sql, reads: (status as { Value: string }[]).reduce((sum, r) => sum + Number(r.Value), 0), plan: '' });
    return rows as unknown[];
  };
  let queue: Promise<unknown> = Promise.resolve();
  const run: ListRunner = <T>(s: ListStatement) => {
    const next = queue.then(() => measure(s));
    queue = next.catch(() => undefined);
    return next as Promise<T[]>;
  };
  try {
    await work(run);
    return seen;
  } finally {
    sqlite?.close();
    await conn?.end();
  }
}

/** Named parameters as positional ones. */
function positional(s: ListStatement): [string, (string | number | boolean | Date | null)[]] {
  const names: string[] = [];
  const text = s.sql.replace(/:(\w+)/g, (_, name: string) => (names.push(name), '?'));
  const params = paramsOf(s.conditions);
  return [text, names.map((n) => params[n] as string | number | boolean | Date | null)];
}
