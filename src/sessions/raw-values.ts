/**
 * Values of plain rows as the drivers hand them out, for the reads that skip TypeORM's
 * hydration: mysql2 gives Dates and 0/1; SQLite gives UTC datetime text
 * (`YYYY-MM-DD HH:MM:SS.SSS`, no zone) and 0/1.
 */
export const dateOf = (value: Date | string): Date => (value instanceof Date ? value : new Date(`${value.replace(' ', 'T')}Z`));

export const nullableDateOf = (value: Date | string | null): Date | null => (value === null ? null : dateOf(value));

/** JSON text columns (persistence/columns.ts jsonColumn): null or empty reads as `empty`. */
export function jsonOf<T>(raw: string | null, empty: T): T {
  return raw === null || raw === '' ? empty : (JSON.parse(raw) as T);
}

/** Flag columns: 0/1 (a number, or its text) from both drivers. */
export const booleanOf = (value: number | boolean | string): boolean => Boolean(Number(value));

/** mysql2 may hand numbers of DOUBLE/BIGINT columns back as strings. */
export const nullableNumberOf = (value: number | string | null): number | null => (value === null ? null : Number(value));
