import type { DataSource } from 'typeorm';
import type { Dialect } from './dialect';

/** Longest an instance waits for another one's migrations before it gives up starting. */
const MIGRATION_LOCK_WAIT_SECONDS = 600;

/**
 * Runs the pending migrations. On MySQL/MariaDB they run under a named lock (GET_LOCK, one
 * per database): instances started together on a fresh database would otherwise each create
 * the same tables, and all but one stop with "Table ... already exists". The others wait,
 * then find nothing left to run. The server releases the lock of a connection that dies, so
 * an instance killed mid-migration does not block the next one.
 */
export async function runMigrationsOnce(dataSource: DataSource, dialect: Dialect): Promise<void> {
  if (dialect === 'sqlite') {
    await dataSource.runMigrations();
    return;
  }
  const runner = dataSource.createQueryRunner('master');
  // Lock names are server-wide and at most 64 characters: named by a hash of the database's name.
  const name = "CONCAT('asg-migrations:', SHA1(DATABASE()))";
  try {
    const [{ got }] = (await runner.query(`SELECT GET_LOCK(${name}, ?) AS got`, [MIGRATION_LOCK_WAIT_SECONDS])) as [{ got: number | null }];
    if (got !== 1) throw new Error(`another instance held the migration lock for more than ${MIGRATION_LOCK_WAIT_SECONDS} s`);
    try {
      await dataSource.runMigrations();
    } finally {
      await runner.query(`SELECT RELEASE_LOCK(${name})`);
    }
  } finally {
    await runner.release();
  }
}
