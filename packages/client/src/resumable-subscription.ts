import { GatewayError, fromGraphQLErrors } from './errors';
import { ResumePoint, type ResumePlan } from './resume';
import type { SubscriptionTransport, TransportFailure } from './transport';

export interface SubscriptionObserver<R> {
  next(data: R): void;
  /** The subscription is over and will not resume (refused, token expired, EVENTS_PRUNED, retries used up). */
  error?(error: GatewayError): void;
  /** The server completed it (turnOutput completes when its turn leaves PENDING). */
  complete?(): void;
}

export interface RetryPolicy {
  /** First wait before re-subscribing; doubles per failed attempt, with jitter. */
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  /** Re-subscribe attempts in a row before giving up (Infinity: keep trying). */
  readonly maxAttempts: number;
}

export const DEFAULT_RETRY: RetryPolicy = { initialDelayMs: 250, maxDelayMs: 10_000, maxAttempts: Infinity };

export interface ResumableDeps {
  readonly transport: SubscriptionTransport;
  readonly retry: RetryPolicy;
  /** The newest event id now, for an event-id subscription the caller gave no starting point. */
  readonly latestEventId: () => Promise<string>;
}

/**
 * One subscription that survives reconnects. Before the first subscribe, an event-id
 * subscription without `afterEventId` is pinned to the newest event id, so a drop before
 * its first event loses nothing either. After a retryable failure it re-subscribes (with
 * backoff) from its resume point; repeats are dropped, so the observer sees each event once,
 * in order. Returns the function that ends it.
 */
export function resumableSubscription(
  deps: ResumableDeps,
  request: { readonly query: string; readonly operationName: string | null; readonly plan: ResumePlan; readonly variables: Record<string, unknown> },
  observer: SubscriptionObserver<Record<string, unknown>>,
): () => void {
  const point = new ResumePoint(request.plan, request.variables);
  let stopped = false;
  let active: (() => void) | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let failures = 0;
  let startedAt = 0;

  const stop = () => {
    stopped = true;
    clearTimeout(timer);
    const unsubscribe = active;
    active = null;
    unsubscribe?.();
  };
  const fail = (error: GatewayError) => {
    if (stopped) return;
    stop();
    observer.error?.(error);
  };
  const retryLater = (cause: GatewayError) => {
    if (stopped) return;
    // A subscription that ran for a while before it dropped starts its backoff afresh.
    if (startedAt > 0 && Date.now() - startedAt > deps.retry.maxDelayMs) failures = 0;
    if (failures >= deps.retry.maxAttempts) return fail(cause);
    const delay = Math.min(deps.retry.maxDelayMs, deps.retry.initialDelayMs * 2 ** failures);
    failures += 1;
    timer = setTimeout(() => void start(), delay / 2 + (Math.random() * delay) / 2);
  };

  const start = async (): Promise<void> => {
    if (stopped) return;
    if (point.needsStart) {
      try {
        point.startAt(await deps.latestEventId());
      } catch (e) {
        const error = e instanceof GatewayError ? e : new GatewayError('NETWORK_ERROR', String(e));
        // Unreachable, or a proxy's error page while the gateway restarts: worth another try.
        return error.code === 'NETWORK_ERROR' || error.code === 'BAD_RESPONSE' ? retryLater(error) : fail(error);
      }
      if (stopped) return;
    }
    startedAt = Date.now();
    active = deps.transport.subscribe(() => ({ query: request.query, operationName: request.operationName, variables: point.variables() }), {
      next: (result) => {
        if (result.errors?.length) return fail(fromGraphQLErrors(result.errors));
        if (!result.data) return;
        failures = 0;
        if (point.accept(result.data)) observer.next(result.data);
      },
      error: (failure: TransportFailure) => {
        active = null;
        if (failure.kind === 'graphql') return fail(fromGraphQLErrors(failure.errors));
        const error = closedError(failure.code, failure.reason);
        return failure.retryable ? retryLater(error) : fail(error);
      },
      complete: () => {
        if (stopped) return;
        active = null;
        stopped = true;
        observer.complete?.();
      },
    });
  };

  void start();
  return stop;
}

/** 4403 is how the gateway closes a socket whose token is missing, bad or expired. */
function closedError(code: number | null, reason: string): GatewayError {
  if (code === 4403) return new GatewayError('UNAUTHENTICATED', reason || 'the token was refused or has expired');
  return new GatewayError('CONNECTION_CLOSED', `the subscription connection closed${code === null ? '' : ` (${code}${reason ? `: ${reason}` : ''})`}`);
}
