import { createConnection } from 'mysql2/promise';

/** A MySQL/MariaDB database of its own for one benchmark run, on the server `base` points at. */
export async function createBenchDatabase(base: string, prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const conn = await createConnection({ uri: base });
  await conn.query(`CREATE DATABASE ${name}`);
  await conn.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = await createConnection({ uri: base });
      await c.query(`DROP DATABASE IF EXISTS ${name}`);
      await c.end();
    },
  };
}
