import Database from 'better-sqlite3';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPool, type RowDataPacket } from 'mysql2/promise';
import { callerCheck, readBody, sendJson } from './baseline-http';
import { serveParent, StatementLog } from './bench-child';
import { COUNT_SQL, pageBody, pageSql, visibleParams, type SummaryRow } from './list-summary';

/**
 * The hand-written baseline of bench/list-sessions.bench.ts, in its own process: node:http,
 * a JWT check, and the page read from the denormalised summary table with two statements
 * (the page plus one row, and the count), on mysql2 (BENCH_MYSQL_URL, a pool of
 * BENCH_POOL_SIZE) or better-sqlite3 on its own read-only connection to the gateway's file
 * (BENCH_SQLITE_FILE). Any POST is answered with the first page of the caller's sessions.
 */
const PAGE_SIZE = Number(process.env.BENCH_PAGE_SIZE ?? 25);
const callerOf = callerCheck(process.env.JWT_SECRET ?? '');

type Read = (org: string, user: string) => Promise<{ rows: SummaryRow[]; total: number }>;

function mysqlReader(url: string, log: StatementLog): { read: Read; close(): Promise<void> } {
  const pool = createPool({ uri: url, connectionLimit: Number(process.env.BENCH_POOL_SIZE ?? 10), timezone: 'Z' });
  const page = pageSql(PAGE_SIZE + 1);
  return {
    async read(org, user) {
      log.record(page);
      log.record(COUNT_SQL);
      const params = visibleParams(org, user);
      const [[rows], [counted]] = await Promise.all([pool.execute<RowDataPacket[]>(page, params), pool.execute<RowDataPacket[]>(COUNT_SQL, params)]);
      return { rows: rows as SummaryRow[], total: Number(counted[0]?.total) };
    },
    close: () => pool.end(),
  };
}

function sqliteReader(file: string, log: StatementLog): { read: Read; close(): Promise<void> } {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  const page = db.prepare<ReturnType<typeof visibleParams>, SummaryRow>(pageSql(PAGE_SIZE + 1));
  const count = db.prepare<ReturnType<typeof visibleParams>, { total: number }>(COUNT_SQL);
  return {
    read(org, user) {
      log.record(page.source);
      log.record(count.source);
      const params = visibleParams(org, user);
      return Promise.resolve({ rows: page.all(...params), total: count.get(...params)?.total ?? 0 });
    },
    close: async () => void db.close(),
  };
}

async function main(): Promise<void> {
  const log = new StatementLog();
  const mysqlUrl = process.env.BENCH_MYSQL_URL;
  const reader = mysqlUrl ? mysqlReader(mysqlUrl, log) : sqliteReader(process.env.BENCH_SQLITE_FILE ?? '', log);
  const server = createServer((req, res) => {
    void (async () => {
      await readBody(req);
      const who = callerOf(req);
      if (!who) return sendJson(res, 401, '{"errors":[{"message":"unauthenticated"}]}');
      const { rows, total } = await reader.read(who.org, who.user);
      sendJson(res, 200, pageBody(rows, PAGE_SIZE, total));
    })().catch((e: unknown) => sendJson(res, 500, JSON.stringify({ errors: [{ message: String(e) }] })));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  serveParent(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, log, async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await reader.close();
  });
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
