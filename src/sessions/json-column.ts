import type { ValueTransformer } from 'typeorm';

/** Stores a JSON document in a long-text column; both dialects read it back the same way. */
export function jsonColumn<T>(empty: T): ValueTransformer {
  return {
    to: (value: T | null | undefined): string => JSON.stringify(value ?? empty),
    from: (raw: string | null): T => (raw === null || raw === '' ? empty : (JSON.parse(raw) as T)),
  };
}
