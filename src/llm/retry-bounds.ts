/** What the gateway asks of the SDK's retries (LLM_MAX_RETRIES, LLM_RETRY_MAX_DELAY_MS). */
export interface RetryBounds {
  readonly maxRetries: number;
  /** The longest wait the provider may ask for (retry-after); a longer ask is not retried. */
  readonly maxDelayMs: number;
}

/** Statuses the openai SDK retries (its README, "Retries"), so the adapter can say why it gave up. */
export const isRetriedStatus = (status: number): boolean => status === 408 || status === 409 || status === 429 || status >= 500;

/**
 * The wait a failed response asks for, read as the SDK reads it: `retry-after-ms`, else
 * `retry-after` in seconds or as an HTTP date. Null when it asks for none.
 */
export function askedRetryDelayMs(headers: Headers, now: number = Date.now()): number | null {
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (ms > 0) return ms;
  const raw = headers.get('retry-after');
  if (!raw) return null;
  const seconds = Number.parseFloat(raw);
  if (!Number.isNaN(seconds)) return seconds * 1000;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/**
 * The `fetch` the SDK sends every attempt through. It fills the two gaps its options leave:
 *
 * - The SDK waits as long as a provider's retry-after asks, with no option to cap it; a
 *   response asking for more than `maxDelayMs` gets the SDK's own `x-should-retry: false`,
 *   so the SDK gives up at once and the adapter reports the ask.
 * - The SDK reports no retries; it numbers each attempt in its `X-Stainless-Retry-Count`
 *   request header, which is read here (never changed) to tell `onRetry`.
 *
 * Everything else (the request, the connection, the stream) is the platform's fetch, as the SDK
 * would call it without this option.
 */
export function retryBoundFetch(maxDelayMs: number, onRetry: (() => void) | undefined): typeof fetch {
  return async (input, init) => {
    if (onRetry && Number(new Headers(init?.headers).get('x-stainless-retry-count')) > 0) onRetry();
    const response = await fetch(input, init);
    if (response.ok || !isRetriedStatus(response.status)) return response;
    const asked = askedRetryDelayMs(response.headers);
    if (asked === null || asked <= maxDelayMs) return response;
    const headers = new Headers(response.headers);
    headers.set('x-should-retry', 'false');
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  };
}
