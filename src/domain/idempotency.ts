import { createHash } from 'node:crypto';
import { badInput } from './errors';

const KEY = /^[\x21-\x7e]{1,200}$/;

/** Printable ASCII, at most 200 characters: what fits the key column and any client can produce. */
export function parseIdempotencyKey(raw: string | null | undefined): string | null {
  if (raw === null || raw === undefined) return null;
  if (!KEY.test(raw)) {
    throw badInput('idempotencyKey must be 1-200 printable ASCII characters without spaces', { field: 'idempotencyKey' });
  }
  return raw;
}

/** JSON with object keys sorted, so equal inputs hash equally whatever order a client used. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** What "the same input" means for an idempotent retry: the operation and its canonical request. */
export const inputFingerprint = (operation: string, request: unknown): string =>
  createHash('sha256').update(operation).update('\n').update(canonicalJson(request)).digest('hex');
