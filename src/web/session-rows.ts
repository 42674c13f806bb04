import type { AgentSessionTurnStatus, SessionActivitySubscription, SessionRowFragment } from '../../packages/client/src/generated/operations';

/** The rows the Sessions page shows and the count of all that match its filters. */
export interface SessionTable {
  readonly rows: readonly SessionRowFragment[];
  readonly totalCount: number;
  /** The gateway stopped counting at its cap (10,000; 100 for a search): there are at least totalCount. */
  readonly totalCountIsLowerBound: boolean;
}

/** The count as the page shows it: "10,000+" when it is only a lower bound. */
export const totalText = (table: SessionTable, format: (n: number) => string): string =>
  table.totalCountIsLowerBound ? `${format(table.totalCount)}+` : format(table.totalCount);

export interface TableView {
  /** Only the first page (newest activity) takes sessions that are not on it yet. */
  readonly firstPage: boolean;
  /** The status filter, which the live feed does not apply (a row that leaves it still updates). */
  readonly status: AgentSessionTurnStatus | null;
}

export type Applied = 'updated' | 'inserted' | 'ignored';

type ActivityEvent = Pick<SessionActivitySubscription['sessionActivity'], 'sequenceNumber' | 'status' | 'session'>;

/**
 * One sessionActivity event applied to the table: a row that is shown takes the session's
 * current values in place; a session that is not shown goes to the top of the first page when
 * it matches the status filter, and counts as one more only when this is its very first turn
 * (otherwise it was already counted, further down the list).
 */
export function applyActivity(table: SessionTable, event: ActivityEvent, view: TableView): { table: SessionTable; applied: Applied } {
  const { session } = event;
  const at = table.rows.findIndex((row) => row.id === session.id);
  if (at >= 0) {
    const rows = [...table.rows];
    rows[at] = session;
    return { table: { ...table, rows }, applied: 'updated' };
  }
  if (!view.firstPage || (view.status !== null && session.lastTurnStatus !== view.status)) return { table, applied: 'ignored' };
  const isNew = event.sequenceNumber === 1 && event.status === 'PENDING';
  return { table: { ...table, rows: [session, ...table.rows], totalCount: table.totalCount + (isNew ? 1 : 0) }, applied: 'inserted' };
}
