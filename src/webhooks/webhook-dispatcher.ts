import type { Logger } from '../logger.port';
import type { WebhookRequest, SentAttempt } from './webhook-http';
import type { ClaimedDelivery, WebhookQueue } from './webhook-queue';
import { verdictOf, type RetryPolicy } from './webhook-rules';
import { signedHeaders } from './webhook-signing';

export interface DispatcherLimits {
  readonly endpointConcurrency: number;
  /** 0 = no limit. */
  readonly endpointRatePerSecond: number;
  readonly maxInFlight: number;
  readonly pollIntervalMs: number;
  /** How long a claim holds: longer than an attempt can take, so a live sender never loses it. */
  readonly leaseMs: number;
  readonly retentionDays: number;
}

export interface DispatcherDeps {
  readonly queue: Pick<WebhookQueue, 'anyDue' | 'claim' | 'settle' | 'prune'>;
  readonly send: (request: WebhookRequest) => Promise<SentAttempt>;
  readonly retry: RetryPolicy;
  readonly limits: DispatcherLimits;
  /** This instance's name on its leases. */
  readonly owner: string;
  /** The scheduling clock (due dates, retries); signatures carry the real time. */
  readonly now: () => Date;
  readonly logger: Logger;
}

/** Deliveries claimed per pass at most. */
const CLAIM_BATCH = 50;
/**
 * Passes one wake may start, at most one per this long (or per poll interval, if shorter):
 * every turn's status changes wake the sender, and each pass reads the outbox (bench:execute:
 * two reads per execute, with no endpoint anywhere). Wakes within the gap join one pass at its
 * end; a wake after a quiet spell starts one at once.
 */
const WAKE_GAP_MS = 100;
const PRUNE_INTERVAL_MS = 3600 * 1000;

/** One endpoint's share of this instance: attempts running, and a token bucket for its rate. */
interface EndpointState {
  inFlight: number;
  tokens: number;
  refilledAt: number;
}

/**
 * The sending loop of one instance. It polls the outbox (and is woken when this instance's
 * turns change, and when one of its attempts ends), claims due deliveries, and sends each
 * without waiting for the others: an endpoint gets at most `endpointConcurrency` attempts at
 * once and `endpointRatePerSecond` a second from this instance, so a slow or flooded receiver
 * holds up only its own deliveries, never other endpoints' or any turn (turns only write rows).
 */
export class WebhookDispatcher {
  private timer: NodeJS.Timeout | null = null;
  private pruneTimer: NodeJS.Timeout | null = null;
  private passing: Promise<void> | null = null;
  private again = false;
  /** The pass of the wakes within the gap, waiting for its end. */
  private deferred: NodeJS.Timeout | null = null;
  private lastPassAt = 0;
  /** The last pass claimed a full batch: the next one starts without waiting out the gap. */
  private more = false;
  private stopped = false;
  private inFlight = 0;
  private readonly endpoints = new Map<string, EndpointState>();
  private readonly attempts = new Set<Promise<void>>();

  constructor(private readonly deps: DispatcherDeps) {}

  start(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => this.wake(), this.deps.limits.pollIntervalMs);
    this.timer.unref();
    const prune = () => {
      const before = new Date(this.deps.now().getTime() - this.deps.limits.retentionDays * 24 * 3600 * 1000);
      this.deps.queue.prune(before).catch((e: unknown) => this.deps.logger.warn({ err: e }, 'pruning webhook deliveries failed'));
    };
    prune();
    this.pruneTimer = setInterval(prune, PRUNE_INTERVAL_MS);
    this.pruneTimer.unref();
    this.wake();
  }

  /**
   * Looks for due deliveries, once started: now, or at the end of the gap since the last pass
   * (one pass at a time; wakes during a pass or a gap run one more after it).
   */
  wake(): void {
    if (this.stopped || !this.timer) return;
    if (this.passing) {
      this.again = true;
      return;
    }
    if (this.deferred) return;
    const wait = this.more ? 0 : this.lastPassAt + Math.min(WAKE_GAP_MS, this.deps.limits.pollIntervalMs) - Date.now();
    if (wait > 0) {
      this.deferred = setTimeout(() => {
        this.deferred = null;
        this.wake();
      }, wait);
      this.deferred.unref();
      return;
    }
    this.more = false;
    this.lastPassAt = Date.now();
    this.passing = this.pass()
      .catch((e: unknown) => this.deps.logger.warn({ err: e }, 'webhook pass failed'))
      .finally(() => {
        this.passing = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Stops claiming; attempts already running finish (each is bounded by its timeout) and are recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    if (this.deferred) clearTimeout(this.deferred);
    this.deferred = null;
    this.timer = null;
    await this.passing;
    await Promise.all([...this.attempts]);
  }

  private async pass(): Promise<void> {
    const { limits, queue, now } = this.deps;
    const room = Math.min(CLAIM_BATCH, limits.maxInFlight - this.inFlight);
    if (room <= 0) return;
    const at = now();
    if (!(await queue.anyDue(at))) return;
    const claimed = await queue.claim({
      owner: this.deps.owner,
      now: at,
      leaseUntil: new Date(at.getTime() + limits.leaseMs),
      limit: room,
      skipEndpoints: [...this.endpoints.keys()].filter((id) => this.roomOf(id) === 0),
      room: (id) => this.roomOf(id),
    });
    for (const delivery of claimed) this.begin(delivery);
    // A full batch may have left more behind.
    if (claimed.length === room && !this.stopped) {
      this.more = true;
      this.again = true;
    }
  }

  /** Attempts one endpoint may still take from this instance right now. */
  private roomOf(endpointId: string): number {
    const { endpointConcurrency, endpointRatePerSecond } = this.deps.limits;
    const state = this.stateOf(endpointId);
    const concurrency = endpointConcurrency - state.inFlight;
    if (endpointRatePerSecond === 0) return Math.max(0, concurrency);
    const nowMs = Date.now();
    state.tokens = Math.min(endpointRatePerSecond, state.tokens + ((nowMs - state.refilledAt) / 1000) * endpointRatePerSecond);
    state.refilledAt = nowMs;
    return Math.max(0, Math.min(concurrency, Math.floor(state.tokens)));
  }

  private stateOf(endpointId: string): EndpointState {
    let state = this.endpoints.get(endpointId);
    if (!state) {
      state = { inFlight: 0, tokens: this.deps.limits.endpointRatePerSecond, refilledAt: Date.now() };
      this.endpoints.set(endpointId, state);
    }
    return state;
  }

  private begin(delivery: ClaimedDelivery): void {
    const state = this.stateOf(delivery.endpointId);
    state.inFlight++;
    if (this.deps.limits.endpointRatePerSecond > 0) state.tokens--;
    this.inFlight++;
    const attempt = this.attempt(delivery)
      .catch((e: unknown) => this.deps.logger.warn({ err: e, deliveryId: delivery.id }, 'recording a webhook attempt failed; it is retried once its lease ends'))
      .finally(() => {
        state.inFlight--;
        this.inFlight--;
        if (state.inFlight === 0 && state.tokens >= this.deps.limits.endpointRatePerSecond) this.endpoints.delete(delivery.endpointId);
        this.attempts.delete(attempt);
        this.wake();
      });
    this.attempts.add(attempt);
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const startedAt = new Date();
    const headers = signedHeaders(delivery.webhookId, delivery.payload, delivery.secrets, startedAt, this.deps.now());
    const { outcome, durationMs } = await this.deps.send({ url: delivery.url, headers, body: delivery.payload });
    const now = this.deps.now();
    const verdict = verdictOf(outcome, delivery.attemptCount + 1, delivery.retryUntil, now, this.deps.retry);
    const record = {
      at: startedAt.toISOString(),
      statusCode: outcome.statusCode,
      durationMs,
      error: outcome.kind === 'delivered' ? null : outcome.kind === 'gone' ? 'HTTP 410: the endpoint is disabled' : outcome.error,
    };
    const kept = await this.deps.queue.settle(delivery, this.deps.owner, record, verdict, now);
    if (!kept) this.deps.logger.warn({ deliveryId: delivery.id }, 'a webhook attempt outlived its lease; another instance took the delivery over');
  }
}
