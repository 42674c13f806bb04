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

/** True when `e` (possibly wrapped by TypeORM) says the session store is down or unreachable. */
export function isDatabaseUnavailable(e: unknown): boolean {
  for (let current: unknown = e, depth = 0; current && depth < 4; depth++) {
    const err = current as { code?: unknown; driverError?: unknown; cause?: unknown; message?: unknown };
    if (typeof err.code === 'string' && UNAVAILABLE_CODES.has(err.code)) return true;
    if (typeof err.message === 'string' && /Connection lost|connection is in closed state|Pool is closed/i.test(err.message)) {
      return true;
    }
    current = err.driverError ?? err.cause;
  }
  return false;
}
