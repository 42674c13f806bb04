import type { ColumnType } from 'typeorm';

/** The SQL engines the gateway runs on. MariaDB is told apart from MySQL at connect time. */
export type Dialect = 'mysql' | 'mariadb' | 'sqlite';

export interface ColumnTypes {
  readonly datetime: { type: ColumnType; precision?: number };
  /** Unbounded text: JSON documents, prompts. MySQL's TEXT stops at 64 KB. */
  readonly longText: ColumnType;
  readonly text: ColumnType;
  readonly double: ColumnType;
  /** SQLite's schema reader reports INTEGER, so migrations must write it that way. */
  readonly integer: ColumnType;
  /** Collation for names users sort by; MySQL's *_ci default already ignores case. */
  readonly caseInsensitive: { collation?: string };
  /**
   * Collation for ids (org, user, session, turn, context, idempotency key): compared byte for
   * byte, trailing spaces included. MySQL's and MariaDB's `utf8mb4_bin` still pad (`'acme '`
   * equals `'acme'`), so the NO PAD binary collation of each; SQLite's default BINARY already is.
   */
  readonly exactId: { collation?: string };
}

/** The NO PAD binary collation of each MySQL-family server (migration 1764400000000). */
export const EXACT_ID_COLLATION = { mysql: 'utf8mb4_0900_bin', mariadb: 'utf8mb4_nopad_bin' } as const;

/** Column types shared by the entities and the migrations, per dialect. */
export function columnTypes(dialect: Dialect): ColumnTypes {
  if (dialect === 'sqlite') {
    return {
      datetime: { type: 'datetime' },
      longText: 'text',
      text: 'text',
      double: 'double',
      integer: 'integer',
      caseInsensitive: { collation: 'NOCASE' },
      exactId: {},
    };
  }
  return {
    datetime: { type: 'datetime', precision: 3 },
    longText: 'longtext',
    text: 'text',
    double: 'double',
    integer: 'int',
    caseInsensitive: {},
    exactId: { collation: EXACT_ID_COLLATION[dialect] },
  };
}

export const dialectOf = (type: string): Dialect =>
  type === 'better-sqlite3' ? 'sqlite' : type === 'mariadb' ? 'mariadb' : 'mysql';
