/** Bounds for retrying a provider call that failed with 429 or 5xx before any answer text arrived. */
export interface RetryBounds {
  readonly maxRetries: number;
  /** The longest wait the gateway accepts, whether the provider asked for it or backoff chose it. */
  readonly maxDelayMs: number;
}

export type RetryDecision = { readonly retry: true; readonly delayMs: number } | { readonly retry: false; readonly reason: string };

const BASE_BACKOFF_MS = 500;

/**
 * Honours the provider's `retry-after-ms` / `retry-after` (seconds or an HTTP date) when it
 * fits the bounds; a provider that asks for longer is not retried early behind its back.
 * Without a hint: exponential backoff from 500 ms with up to 25 % jitter, capped.
 */
export function decideRetry(
  attempt: number,
  headers: { get(name: string): string | null } | null,
  bounds: RetryBounds,
  now: number = Date.now(),
): RetryDecision {
  if (attempt >= bounds.maxRetries) return { retry: false, reason: `no recovery after ${bounds.maxRetries} retries` };
  const asked = retryAfterMs(headers, now);
  if (asked !== null) {
    if (asked > bounds.maxDelayMs) {
      return { retry: false, reason: `the provider asked to wait ${Math.ceil(asked / 1000)} s, longer than the gateway waits` };
    }
    return { retry: true, delayMs: asked };
  }
  const backoff = Math.min(BASE_BACKOFF_MS * 2 ** attempt, bounds.maxDelayMs);
  return { retry: true, delayMs: Math.round(backoff * (1 - Math.random() * 0.25)) };
}

function retryAfterMs(headers: { get(name: string): string | null } | null, now: number): number | null {
  const ms = Number.parseFloat(headers?.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const raw = headers?.get('retry-after');
  if (!raw) return null;
  const seconds = Number(raw.trim());
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** A timer that an abort signal cuts short (rejecting with the signal's reason). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
