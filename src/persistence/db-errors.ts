import { UnavailableError } from '../domain/errors';

/** Driver error codes that mean "the database cannot be reached", not "the statement was wrong". */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'POOL_CLOSED',
  'SQLITE_BUSY',
  'SQLITE_CANTOPEN',
  'SQLITE_IOERR',
]);

/**
 * The session store cannot be reached (refused, timed out, connection lost). The database
 * wrapper raises it for every statement, so whatever the caller (resolver, subscription,
 * REST, background task) it reaches clients as SERVICE_UNAVAILABLE, never as an internal
 * error, and nothing above persistence reads driver codes. `reason` is for logs only.
 */
export class StoreUnavailableError extends UnavailableError {
  constructor(reason: string, cause?: unknown) {
    super('session store', reason, cause === undefined ? undefined : { cause });
    this.name = 'StoreUnavailableError';
  }
}

/**
 * The server ended a statement at the gateway's deadline (MariaDB's max_statement_time,
 * MySQL's max_execution_time): as unavailable as a server that did not answer in time.
 */
const STATEMENT_TIMEOUT_ERRNOS = new Set([1969, 3024]);

/** MySQL's deadlock and lock-wait-timeout errors: the transaction may simply be run again. */
const DEADLOCK_ERRNOS = new Set([1213, 1205]);
const DUPLICATE_KEY_ERRNO = 1062;
/** ER_TOO_MANY_ROWS: raised on purpose by the guard after an optimistic write (persistence/mysql-sql.ts). */
const GUARD_FAILED_ERRNO = 1172;

/**
 * The translation of driver errors: the only place that reads driver codes. Stores above it
 * ask these questions (or catch StoreUnavailableError), never the driver's numbers.
 */
export const isDeadlock = (e: unknown): boolean => {
  const errno = errnoOf(e);
  return typeof errno === 'number' && DEADLOCK_ERRNOS.has(errno);
};

/** An INSERT lost a race for a unique key (MySQL; SQLite writers are serialised and never race). */
export const isDuplicateKey = (e: unknown): boolean => errnoOf(e) === DUPLICATE_KEY_ERRNO;

/** The guard after a statement that had to change one row found it changed none (MySQL). */
export const isGuardFailure = (e: unknown): boolean => errnoOf(e) === GUARD_FAILED_ERRNO;

function errnoOf(e: unknown): unknown {
  const err = e as { errno?: unknown; driverError?: { errno?: unknown } };
  return err.driverError?.errno ?? err.errno;
}

/** True when `e` (possibly wrapped by TypeORM) says the session store is down or unreachable. */
export function isDatabaseUnavailable(e: unknown): boolean {
  for (let current: unknown = e, depth = 0; current && depth < 4; depth++) {
    if (current instanceof StoreUnavailableError) return true;
    const err = current as { code?: unknown; errno?: unknown; driverError?: unknown; cause?: unknown; message?: unknown };
    if (typeof err.code === 'string' && UNAVAILABLE_CODES.has(err.code)) return true;
    if (typeof err.errno === 'number' && STATEMENT_TIMEOUT_ERRNOS.has(err.errno)) return true;
    if (typeof err.message === 'string' && /Connection lost|connection is in closed state|Pool is closed/i.test(err.message)) {
      return true;
    }
    current = err.driverError ?? err.cause;
  }
  return false;
}

/** The error as the database wrapper raises it: unreachable-store failures typed, anything else unchanged. */
export function typedStoreError(e: unknown): unknown {
  if (e instanceof StoreUnavailableError || !isDatabaseUnavailable(e)) return e;
  const message = (e as { message?: unknown }).message;
  return new StoreUnavailableError(typeof message === 'string' ? message : 'unreachable', e);
}
