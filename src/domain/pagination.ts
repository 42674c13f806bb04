import { badInput } from './errors';

export const MAX_PAGE_SIZE = 100;

export interface PageRequest {
  readonly first: number;
  readonly after: string | null;
}

/** Relay's backward page: the `last` items before the cursor (or the end), in list order. */
export interface BackwardPageRequest {
  readonly last: number;
  readonly before: string | null;
}

/** A page of a list that pages both ways (the session lists). */
export type ListPageRequest = PageRequest | BackwardPageRequest;

export const isBackward = (page: ListPageRequest): page is BackwardPageRequest => 'last' in page;

export interface Page<T> {
  readonly items: readonly T[];
  /** The cursor of one of the items; computed only for the cursors a client selects. */
  readonly cursorOf: (item: T) => string;
  readonly hasNextPage: boolean;
  /** Lists that only page forward leave it out: Relay then allows false. */
  readonly hasPreviousPage?: boolean;
}

export function assertPageSize(size: number, argument: 'first' | 'last' = 'first'): number {
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) {
    throw badInput(`${argument} must be between 1 and ${MAX_PAGE_SIZE}`, { argument });
  }
  return size;
}

export const malformedCursor = (argument: 'after' | 'before' = 'after') => badInput('malformed cursor', { argument });

/**
 * Opaque keyset cursor: which ordering it belongs to, the sort key and the id that breaks
 * ties. A cursor from another ordering is as malformed as random text.
 */
export interface CursorPosition {
  readonly key: string | number;
  readonly id: string;
}

export function encodeCursor(ordering: string, position: CursorPosition): string {
  return Buffer.from(JSON.stringify([ordering, position.key, position.id]), 'utf8').toString('base64url');
}

export function decodeCursor(ordering: string, cursor: string, argument: 'after' | 'before' = 'after'): CursorPosition {
  const malformed = malformedCursor(argument);
  if (cursor.length > 512 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw malformed;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw malformed;
  }
  if (!Array.isArray(parsed) || parsed.length !== 3) throw malformed;
  const [o, key, id] = parsed as unknown[];
  if (o !== ordering || typeof id !== 'string') throw malformed;
  if (typeof key !== 'string' && !(typeof key === 'number' && Number.isFinite(key))) throw malformed;
  return { key, id };
}
