import type { ExpiredTurn } from '../domain/turn';
import type { Database } from '../persistence/database';
import type { TurnLeases } from './session-store.port';
import type { SessionEntities } from './session.entities';

/**
 * Leases of PENDING turns (nothing lost on faults): the instance running a turn renews its
 * lease; a turn whose lease runs out is found here and failed by any instance's sweeper
 * through the turn lifecycle.
 */
export class TurnLeaseStore implements TurnLeases {
  constructor(
    private readonly db: Database<SessionEntities>,
    private readonly now: () => Date,
  ) {}

  async renewLeases(owner: string, turnIds: readonly string[], expiresAt: Date): Promise<string[]> {
    if (turnIds.length === 0) return [];
    return this.db.transaction(async (em) => {
      await em
        .createQueryBuilder()
        .update(this.db.entities.turns)
        .set({ leaseExpiresAt: expiresAt })
        .where('id IN (:...ids)', { ids: [...turnIds] })
        .andWhere('status = :pending', { pending: 'PENDING' })
        .andWhere('lease_owner = :owner', { owner })
        .execute();
      const held = await em
        .createQueryBuilder(this.db.entities.turns, 't')
        .select('t.id', 'id')
        .where('t.id IN (:...ids)', { ids: [...turnIds] })
        .andWhere('t.status = :pending', { pending: 'PENDING' })
        .andWhere('t.leaseOwner = :owner', { owner })
        .getRawMany<{ id: string }>();
      const kept = new Set(held.map((r) => r.id));
      return turnIds.filter((id) => !kept.has(id));
    });
  }

  async releaseLeases(owner: string): Promise<void> {
    await this.db.run((em) =>
      em
        .createQueryBuilder()
        .update(this.db.entities.turns)
        .set({ leaseExpiresAt: this.now() })
        .where('status = :pending', { pending: 'PENDING' })
        .andWhere('lease_owner = :owner', { owner })
        .execute(),
    );
  }

  async expiredTurns(limit: number): Promise<ExpiredTurn[]> {
    const rows = await this.db.run((em) =>
      em
        .createQueryBuilder(this.db.entities.turns, 't')
        .select(['t.id', 't.sessionId', 't.orgId', 't.pendingToolCalls'])
        .where('t.status = :pending', { pending: 'PENDING' })
        .andWhere('t.leaseExpiresAt < :now', { now: this.now() })
        .orderBy('t.leaseExpiresAt', 'ASC')
        .take(limit)
        .getMany(),
    );
    return rows.map((r) => ({
      orgId: r.orgId,
      sessionId: r.sessionId,
      turnId: r.id,
      waitingForToolResults: r.pendingToolCalls.length > 0,
    }));
  }
}
