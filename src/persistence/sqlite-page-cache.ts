/**
 * How much of its database file each embedded SQLite connection keeps in memory, in KiB.
 * better-sqlite3 builds SQLite with a 16 MB page cache per connection (SQLite's own default is
 * 2 MB), and a connection keeps every page it wrote or read until its cache is full: as the
 * files grow, the writer's and the blob store's caches each filled towards 16 MB, the process's
 * memory growing with the database (bench:soak; docs/performance.md). A page not cached is read
 * from the operating system's file cache, which holds the file once for every connection; a
 * connection's cache only needs the pages it rereads.
 */
export const PAGE_CACHE_KIB = {
  /** The main connection: each commit rereads the tables' and indexes' upper pages. */
  writer: 2048,
  /**
   * The reader thread, at better-sqlite3's default: the read path, where a list's count rereads
   * the org's part of the sessions index (bench:scale). In the soak it did not grow: the lists
   * reread the same pages.
   */
  reader: 16000,
  /** The blob store: appends, and reads back an object seldom and once. */
  blobs: 2048,
} as const;

/** A connection with better-sqlite3's `pragma` (TypeORM's prepareDatabase hands it over too). */
export interface PragmaConnection {
  pragma(source: string): unknown;
}

/** Caps `db`'s page cache at `kib` (a negative cache_size is in KiB, not pages). */
export function limitPageCache(db: PragmaConnection, kib: number): void {
  db.pragma(`cache_size = -${kib}`);
}
