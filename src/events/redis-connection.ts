import type { Redis } from 'ioredis';

/** Reconnect soon, then at most every 2 s, for as long as Redis stays away. */
export const redisRetryStrategy = (attempt: number): number => Math.min(100 * 2 ** Math.min(attempt, 5), 2_000);

/**
 * Drops and reconnects a connection that stops answering. A network partition that drops
 * packets leaves the socket open and raises no error, so without this a subscriber would
 * wait forever and commands would queue up. Every `intervalMs` a PING that gets no answer
 * within `timeoutMs` destroys the socket; ioredis then reconnects by its retry strategy
 * (and re-subscribes). Returns the function that stops watching.
 */
export function reconnectWhenSilent(connection: Redis, options: { readonly intervalMs: number; readonly timeoutMs: number }): () => void {
  let probing = false;
  const timer = setInterval(() => {
    if (probing || connection.status !== 'ready') return;
    probing = true;
    let deadline: NodeJS.Timeout | undefined;
    const silent = new Promise<'silent'>((resolve) => {
      deadline = setTimeout(() => resolve('silent'), options.timeoutMs);
    });
    Promise.race([connection.ping().catch(() => 'failed'), silent])
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
