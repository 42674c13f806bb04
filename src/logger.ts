import pino, { type Logger } from 'pino';

export type { Logger };

/** One structured logger for the process; tests pass `silent`. */
export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'agent-session-gateway' } });
}
