import { DomainError, type ErrorCode } from '../domain/errors';

/**
 * Why retrieval could not answer. The message is safe to show a user (it becomes a turn
 * warning); details that could leak infrastructure (URLs, stack traces) go to the log only.
 */
export type RetrievalErrorKind =
  /** The collection was never indexed (run the ingest). */
  | 'collection-missing'
  /** The collection's vectors come from another embedder or have another dimension. */
  | 'embedder-mismatch'
  /** The vector store or the embedding provider did not answer. */
  | 'unavailable'
  /** Another writer (an ingest) holds the collection. */
  | 'busy'
  /** The request itself is unusable (bad collection name, limit). */
  | 'bad-request';

const CODE_OF: Readonly<Record<RetrievalErrorKind, ErrorCode>> = {
  'collection-missing': 'NOT_FOUND',
  'embedder-mismatch': 'CONFLICT',
  unavailable: 'SERVICE_UNAVAILABLE',
  busy: 'SERVICE_UNAVAILABLE',
  'bad-request': 'BAD_USER_INPUT',
};

/** The one error shape (a DomainError) with the retrieval-specific reason as `kind`. */
export class RetrievalError extends DomainError {
  constructor(
    readonly kind: RetrievalErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(CODE_OF[kind], message, {}, options);
    this.name = 'RetrievalError';
  }
}

export const isRetrievalError = (e: unknown): e is RetrievalError => e instanceof RetrievalError;
