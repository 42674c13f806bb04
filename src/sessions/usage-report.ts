import { isAdmin, type Caller } from '../domain/caller';
import { isTurnStatus } from '../domain/turn-status';
import { assertUsageDays, fillUsageDays, usageWindow, type UsageAggregateRow, type UsageByDay } from '../domain/usage-days';
import type { Database } from '../persistence/database';
import type { SessionEntities } from './session.entities';

interface RawRow {
  readonly day: string;
  readonly status: string;
  readonly turns: number | string;
  readonly cost: number | string | null;
}

/**
 * Turns per UTC day by status, and their cost, for the usage chart: the whole organisation
 * for admins, the caller's own turns for everyone else. Counts every turn created in the
 * window, deleted sessions included (the cost was incurred all the same), but not a fork's
 * copies of turns, whose cost was incurred once, by the turns they copy.
 */
export class UsageReport {
  constructor(
    private readonly db: Database<SessionEntities>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async usageByDay(caller: Caller, days: number): Promise<UsageByDay> {
    const { since, dates } = usageWindow(this.now(), assertUsageDays(days));
    const orgWide = isAdmin(caller);
    const day = this.db.dialect === 'sqlite' ? `strftime('%Y-%m-%d', t.creationDate)` : `DATE_FORMAT(t.creationDate, '%Y-%m-%d')`;
    // Through the sessions' (org, last updated) index: adding a turn moves its session's
    // lastUpdatedDate to the turn's creation date, so no session updated before the window
    // has a turn in it.
    const raw = await this.db.run((em) => {
      const qb = em
        .createQueryBuilder(this.db.entities.turns, 't')
        .innerJoin(this.db.entities.sessions.options.name, 's', 's.id = t.sessionId')
        .select(day, 'day')
        .addSelect('t.status', 'status')
        .addSelect('COUNT(*)', 'turns')
        .addSelect('COALESCE(SUM(t.estimatedCostUsd), 0)', 'cost')
        .where('s.orgId = :org', { org: caller.orgId })
        .andWhere('s.lastUpdatedDate >= :since', { since })
        .andWhere('t.orgId = :org')
        .andWhere('t.creationDate >= :since')
        // A fork's copies of earlier turns were counted (and charged) as the turns they copy.
        .andWhere('NOT EXISTS (SELECT 1 FROM agent_session_turn_copies c WHERE c.turn_id = t.id)');
      if (!orgWide) qb.andWhere('t.createdByUserId = :user', { user: caller.userId });
      return qb.groupBy('day').addGroupBy('t.status').getRawMany<RawRow>();
    });
    const rows: UsageAggregateRow[] = raw.flatMap((r) =>
      isTurnStatus(r.status) ? [{ date: String(r.day), status: r.status, turns: Number(r.turns), estimatedCostUsd: Number(r.cost ?? 0) }] : [],
    );
    return { scope: orgWide ? 'ORGANIZATION' : 'CALLER', days: fillUsageDays(dates, rows) };
  }
}
