import type { Logger as OrmLogger } from 'typeorm';
import type { Logger } from '../logger';

/** TypeORM's log, into the gateway's: statements to the query listener (tests count them), failures at debug (callers see typed errors). */
export class OrmLog implements OrmLogger {
  constructor(
    private readonly out: Logger,
    private readonly onQuery?: (sql: string) => void,
  ) {}
  logQuery(query: string): void {
    this.onQuery?.(query);
  }
  logQueryError(error: string | Error, query: string): void {
    this.out.debug({ err: error, query }, 'sql statement failed');
  }
  logQuerySlow(time: number, query: string): void {
    this.out.warn({ ms: time, query }, 'slow sql statement');
  }
  logSchemaBuild(message: string): void {
    this.out.debug(message);
  }
  logMigration(message: string): void {
    this.out.info(message);
  }
  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    if (level === 'warn') this.out.warn({ message }, 'typeorm');
    else this.out.debug({ message }, 'typeorm');
  }
}
