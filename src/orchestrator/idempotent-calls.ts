import { setTimeout as delay } from 'node:timers/promises';
import type { Caller } from '../domain/caller';
import { conflict, DomainError, ERROR_CODES, isDomainError, type ErrorCode, type ErrorDetails } from '../domain/errors';
import type { Logger } from '../logger.port';
import type { IdempotencyKeyStore, IdempotencyScope } from '../idempotency/idempotency.port';

export interface IdempotencyOptions {
  /** How long a retry waits for a first call that is still running before CONFLICT. */
  readonly waitMs: number;
  /** How long a finished outcome is replayed. */
  readonly retentionSeconds: number;
  /** After this, a RUNNING key whose call never finished (its instance died) may be taken over. */
  readonly runningMs: number;
}

/** What a retry receives: the first call's value, or the error it ended with after creating a turn. */
type StoredOutcome<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly code: ErrorCode; readonly message: string; readonly details: ErrorDetails };

const POLL_MS = 100;

/**
 * Issue 3 point 9: a retry with the same key and input gets the first call's result and runs
 * nothing; the same key with another input is IDEMPOTENCY_KEY_REUSED; while the first call
 * runs, a retry waits (bounded) and then gets CONFLICT. A first call that failed before it
 * created a turn changed nothing, so its key is released and a retry runs afresh.
 */
export class IdempotentCalls {
  /** First calls running in this instance: a retry here awaits them instead of polling. */
  private readonly local = new Map<string, Promise<unknown>>();

  constructor(
    private readonly keys: IdempotencyKeyStore,
    private readonly options: IdempotencyOptions,
    private readonly logger: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** `fingerprint` is computed only for a call with a key (most have none; hashing the whole input is not free). */
  async run<T>(caller: Caller, key: string | null, fingerprintOf: () => string, work: () => Promise<T>): Promise<T> {
    if (key === null) return work();
    const fingerprint = fingerprintOf();
    const scope: IdempotencyScope = { orgId: caller.orgId, userId: caller.userId };
    const localKey = JSON.stringify([caller.orgId, caller.userId, key]);
    const deadline = Date.now() + this.options.waitMs;
    for (;;) {
      const runningUntil = new Date(this.now().getTime() + this.options.runningMs);
      const claim = await this.keys.claim(scope, key, fingerprint, runningUntil);
      if (claim.kind === 'done') return replay<T>(claim.outcome);
      if (claim.kind === 'claimed') return this.runClaimed(scope, key, localKey, work);
      const first = this.local.get(localKey);
      if (first) {
        await first.catch(() => undefined);
        continue;
      }
      if (Date.now() >= deadline) {
        throw conflict('a call with this idempotencyKey is still running; retry later', { field: 'idempotencyKey' });
      }
      await delay(POLL_MS);
    }
  }

  private async runClaimed<T>(scope: IdempotencyScope, key: string, localKey: string, work: () => Promise<T>): Promise<T> {
    const running = this.settle(scope, key, work);
    this.local.set(localKey, running);
    try {
      return await running;
    } finally {
      this.local.delete(localKey);
    }
  }

  private async settle<T>(scope: IdempotencyScope, key: string, work: () => Promise<T>): Promise<T> {
    const keepUntil = () => new Date(this.now().getTime() + this.options.retentionSeconds * 1000);
    let value: T;
    try {
      value = await work();
    } catch (e) {
      const turn = isDomainError(e) ? turnOf(e.details) : null;
      if (isDomainError(e) && turn) {
        const outcome: StoredOutcome<T> = { ok: false, code: e.code, message: e.message, details: e.details };
        await this.record(() => this.keys.finish(scope, key, JSON.stringify(outcome), turn, keepUntil()));
      } else {
        await this.record(() => this.keys.release(scope, key));
      }
      throw e;
    }
    const outcome: StoredOutcome<T> = { ok: true, value };
    await this.record(() => this.keys.finish(scope, key, JSON.stringify(outcome), turnOf(value), keepUntil()));
    return value;
  }

  /** The call's own result matters more than bookkeeping: a key left RUNNING expires by itself. */
  private async record(write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (e) {
      this.logger.warn({ err: e }, 'could not record an idempotency outcome');
    }
  }
}

function replay<T>(stored: string): T {
  const outcome = JSON.parse(stored) as StoredOutcome<T>;
  if (outcome.ok) return outcome.value;
  const code = (ERROR_CODES as readonly string[]).includes(outcome.code) ? outcome.code : 'CONFLICT';
  throw new DomainError(code, outcome.message, outcome.details);
}

function turnOf(value: unknown): { sessionId: string; turnId: string } | null {
  const v = value as { sessionId?: unknown; turnId?: unknown } | null;
  return v && typeof v.sessionId === 'string' && typeof v.turnId === 'string' ? { sessionId: v.sessionId, turnId: v.turnId } : null;
}
