/** One log call: structured details first (`err` for an error), then the message. */
export interface LogFn {
  (details: object, message?: string): void;
  (message: string): void;
}

/**
 * Port: the part of the process logger (logger.ts, pino) that the orchestrator uses, so the
 * turn pipeline can be run with any logger, a test's included.
 */
export interface Logger {
  readonly error: LogFn;
  readonly warn: LogFn;
  readonly info: LogFn;
  readonly debug: LogFn;
}
