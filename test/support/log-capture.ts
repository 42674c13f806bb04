import { Writable } from 'node:stream';
import pino, { type Level, type Logger } from 'pino';

/** A pino logger at `level` whose lines land, parsed, in `lines`: for tests that check what was logged. */
export function capturingLogger(level: Level): { readonly logger: Logger; readonly lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level }, sink), lines };
}
