import type { ValueTransformer } from 'typeorm';

/** Stores a JSON document in a long-text column; both dialects read it back the same way. */
export function jsonColumn<T>(empty: T): ValueTransformer {
  return {
    to: (value: T | null | undefined): string => JSON.stringify(value ?? empty),
    from: (raw: string | null): T => (raw === null || raw === '' ? empty : (JSON.parse(raw) as T)),
  };
}

/** mysql2 hands BIGINT back as a string once it exceeds 2^53; ours never do. */
export const bigintNumber: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (raw: string | number | null) => (raw === null ? null : Number(raw)),
};
