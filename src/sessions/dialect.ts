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
}

/** Column types shared by the entities and the migrations, per dialect. */
export function columnTypes(dialect: Dialect): ColumnTypes {
  if (dialect === 'sqlite') {
    return { datetime: { type: 'datetime' }, longText: 'text', text: 'text', double: 'double', integer: 'integer', caseInsensitive: { collation: 'NOCASE' } };
  }
  return { datetime: { type: 'datetime', precision: 3 }, longText: 'longtext', text: 'text', double: 'double', integer: 'int', caseInsensitive: {} };
}

export const dialectOf = (type: string): Dialect =>
  type === 'better-sqlite3' ? 'sqlite' : type === 'mariadb' ? 'mariadb' : 'mysql';
