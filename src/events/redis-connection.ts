import type { Redis } from 'ioredis';

/** Reconnect soon, then at most every 2 s, for as long as Redis stays away. */
export const redisRetryStrategy = (attempt: number): number => Math.min(100 * 2 ** Math.min(attempt, 5), 2_000);

/** Statuses in which the connection waits for an answer from Redis (handshake, ready check). */
const AWAITING = new Set(['connecting', 'connect']);

/**
 * Drops and reconnects a connection that stops answering. A network partition that drops
 * packets leaves the socket open and raises no error, so without this a subscriber would
 * wait forever, commands would queue up, and a reconnect stuck in its ready check would
 * never finish. Every `intervalMs`: a ready connection must answer PING within
 * `timeoutMs`, and a connection may not wait in its handshake longer than that; otherwise
 * its socket is destroyed and ioredis reconnects by its retry strategy (and re-subscribes).
 * Returns the function that stops watching.
 */
export function reconnectWhenSilent(connection: Redis, options: { readonly intervalMs: number; readonly timeoutMs: number }): () => void {
  let probing = false;
  let awaitingSince: number | null = null;
  const timer = setInterval(() => {
    if (AWAITING.has(connection.status)) {
      awaitingSince ??= Date.now();
      if (Date.now() - awaitingSince > options.timeoutMs) {
        awaitingSince = null;
        connection.stream?.destroy();
      }
      return;
    }
    awaitingSince = null;
    if (probing || connection.status !== 'ready') return;
    probing = true;
    let deadline: NodeJS.Timeout | undefined;
    const silent = new Promise<'silent'>((resolve) => {
      deadline = setTimeout(() => resolve('silent'), options.timeoutMs);
    });
    void Promise.race([connection.ping().catch(() => 'failed'), silent])
      .then((answer) => {
        if (answer === 'silent') connection.stream?.destroy();
      })
      .finally(() => {
        clearTimeout(deadline);
        probing = false;
      });
  }, options.intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
