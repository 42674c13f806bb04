import { DomainError } from '../domain/errors';
import type { Database } from '../persistence/database';
import { isDuplicateKey } from '../persistence/db-errors';
import type { IdempotencyEntities, IdempotencyRow } from './idempotency.entities';
import type { IdempotencyClaim, IdempotencyKeyStore, IdempotencyScope } from './idempotency.port';

/** The idempotency_keys table: claim a key for an input fingerprint, record the outcome. */
export class IdempotencyKeys implements IdempotencyKeyStore {
  constructor(
    private readonly db: Database<IdempotencyEntities>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Claims `key` for `inputHash`. The same key with another input is IDEMPOTENCY_KEY_REUSED.
   * A key past its expiry (its first call died, or its retention ended) is taken over.
   */
  async claim(scope: IdempotencyScope, key: string, inputHash: string, runningUntil: Date): Promise<IdempotencyClaim> {
    // MySQL: a new key (nearly every call) is one insert, without a locking read first. That
    // read of a missing row takes a gap lock, and claims of other keys in the same gap then
    // deadlock on their inserts (50 executes at once over two instances did). Only a key that
    // exists is read and decided under its row lock. SQLite's one writer has no such race.
    if (this.db.dialect !== 'sqlite') {
      try {
        await this.db.run((em) => em.insert(this.db.entities.idempotencyKeys, this.freshRow(scope, key, inputHash, runningUntil)));
        return { kind: 'claimed' };
      } catch (e) {
        if (!isDuplicateKey(e)) throw e;
      }
    }
    try {
      return await this.tryClaim(scope, key, inputHash, runningUntil);
    } catch (e) {
      // Two first calls raced to insert the key: the loser now sees the winner's row.
      if (!isDuplicateKey(e)) throw e;
      return this.tryClaim(scope, key, inputHash, runningUntil);
    }
  }

  private tryClaim(scope: IdempotencyScope, key: string, inputHash: string, runningUntil: Date): Promise<IdempotencyClaim> {
    const entity = this.db.entities.idempotencyKeys;
    return this.db.transaction(async (em) => {
      const qb = em
        .createQueryBuilder(entity, 'k')
        .where('k.orgId = :org AND k.userId = :user AND k.key = :key', { org: scope.orgId, user: scope.userId, key });
      if (this.db.dialect !== 'sqlite') qb.setLock('pessimistic_write');
      const row = await qb.getOne();
      const now = this.now();
      const fresh = this.freshRow(scope, key, inputHash, runningUntil, now);
      if (!row) {
        await em.insert(entity, fresh);
        return { kind: 'claimed' };
      }
      if (row.expiresAt.getTime() <= now.getTime()) {
        await em.update(entity, { orgId: scope.orgId, userId: scope.userId, key }, fresh);
        return { kind: 'claimed' };
      }
      if (row.inputHash !== inputHash) {
        throw new DomainError('IDEMPOTENCY_KEY_REUSED', 'this idempotencyKey was already used with a different input', {
          field: 'idempotencyKey',
        });
      }
      return row.state === 'DONE' && row.outcome !== null ? { kind: 'done', outcome: row.outcome } : { kind: 'running' };
    });
  }

  private freshRow(scope: IdempotencyScope, key: string, inputHash: string, runningUntil: Date, now = this.now()): IdempotencyRow {
    return { orgId: scope.orgId, userId: scope.userId, key, inputHash, state: 'RUNNING', outcome: null, sessionId: null, turnId: null, createdDate: now, expiresAt: runningUntil };
  }

  /** Records the outcome every retry with the same input receives until `keepUntil`. */
  async finish(
    scope: IdempotencyScope,
    key: string,
    outcome: string,
    turn: { readonly sessionId: string; readonly turnId: string } | null,
    keepUntil: Date,
  ): Promise<void> {
    await this.db.run((em) =>
      em.update(
        this.db.entities.idempotencyKeys,
        { orgId: scope.orgId, userId: scope.userId, key },
        { state: 'DONE', outcome, sessionId: turn?.sessionId ?? null, turnId: turn?.turnId ?? null, expiresAt: keepUntil },
      ),
    );
  }

  /** The first call changed nothing (bad input, busy session, ...): a retry may run afresh. */
  async release(scope: IdempotencyScope, key: string): Promise<void> {
    await this.db.run((em) =>
      em.delete(this.db.entities.idempotencyKeys, {
        orgId: scope.orgId,
        userId: scope.userId,
        key,
        state: 'RUNNING',
      }),
    );
  }

  /** Forgets keys past their retention (and RUNNING keys whose call died). */
  async purgeExpired(): Promise<number> {
    const result = await this.db.run((em) =>
      em
        .createQueryBuilder()
        .delete()
        .from(this.db.entities.idempotencyKeys)
        .where('expires_at < :now', { now: this.now() })
        .execute(),
    );
    return result.affected ?? 0;
  }
}
