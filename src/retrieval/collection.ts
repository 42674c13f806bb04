import { createHash } from 'node:crypto';
import { RetrievalError } from './retrieval-error';
import type { EmbeddingSpace } from './vector-store.port';

/** Names both Qdrant and a directory under DATA_DIR accept, with no way to climb out of it. */
const COLLECTION_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$/;

export function assertCollectionName(name: string): string {
  if (!COLLECTION_NAME.test(name) || name.includes('..')) {
    throw new RetrievalError(
      'bad-request',
      `"${name.slice(0, 60)}" is not a usable vector collection name (letters, digits, "_", "-", "." only)`,
    );
  }
  return name;
}

/** Separates the org part from the collection in org-scoped names; refused in `vectorCollection`. */
export const ORG_SEPARATOR = '__';
/** Marks an org part that is a hash; no org id kept as it is starts with it. */
const HASHED_ORG = 'x--';

/**
 * The org part of an org-scoped collection name. It never contains "__" and never ends in
 * "_", so the first "__" of `<org part>__<collection>` is always the separator, whatever
 * the collection: no two (org, collection) pairs share a name. Org ids that already
 * satisfy that (and do not start with "x--") are kept as they are, so existing indexes
 * keep their names; any other id becomes "x--" + its SHA-256 in hex.
 */
export function orgPartOf(orgId: string): string {
  const plain =
    /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(orgId) &&
    !orgId.includes(ORG_SEPARATOR) &&
    !orgId.includes('..') &&
    !orgId.endsWith('_') &&
    !orgId.startsWith(HASHED_ORG);
  return plain ? orgId : `${HASHED_ORG}${createHash('sha256').update(orgId, 'utf8').digest('hex')}`;
}

/**
 * The collection an agent context's `vectorCollection` means. With org-scoped collections
 * (RETRIEVAL_ORG_SCOPED_COLLECTIONS) one org cannot read another's index by naming it.
 */
export function physicalCollection(orgScoped: boolean, orgId: string | null, collection: string): string {
  if (!orgScoped) return assertCollectionName(collection);
  if (!orgId) throw new RetrievalError('bad-request', 'org-scoped collections need an org id');
  return assertCollectionName(`${orgPartOf(orgId)}${ORG_SEPARATOR}${collection}`);
}

/** Qdrant named vector for an embedder: the collection itself records which embedder filled it. */
export const vectorNameOf = (embedderId: string): string => embedderId.toLowerCase().replace(/[^a-z0-9_-]/g, '_');

export function sameSpace(a: EmbeddingSpace, b: EmbeddingSpace): boolean {
  return vectorNameOf(a.embedderId) === vectorNameOf(b.embedderId) && a.dimension === b.dimension;
}

export function spaceMismatch(collection: string, stored: string, expected: EmbeddingSpace): RetrievalError {
  return new RetrievalError(
    'embedder-mismatch',
    `collection "${collection}" holds ${stored}, but this gateway embeds with ${expected.embedderId} ` +
      `(dimension ${expected.dimension}); re-index it with this embedder or configure the one it was built with`,
  );
}

export const describeSpace = (space: EmbeddingSpace): string =>
  `vectors of ${space.embedderId} (dimension ${space.dimension})`;
