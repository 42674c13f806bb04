import { Brackets, type ObjectLiteral, type SelectQueryBuilder } from 'typeorm';
import { isAdmin, type Caller } from '../domain/caller';
import { decodeCursor, encodeCursor, malformedCursor, type CursorPosition } from '../domain/pagination';
import type { SessionFilter, SessionOrder } from '../domain/session';
import type { SessionRow } from './session.entities';

/**
 * SQL form of domain/visibility.ts `canRead`, for lists: the caller's org only; admins see
 * all of it, others what they own, take part in, or what is public; deleted sessions only
 * for admins who ask. The sessions must be joined as alias `s` (they need not be the root).
 */
export function applyVisibility<T extends ObjectLiteral>(qb: SelectQueryBuilder<T>, caller: Caller, includeDeleted: boolean): void {
  qb.andWhere('s.orgId = :callerOrg', { callerOrg: caller.orgId });
  if (!includeDeleted) qb.andWhere('s.isDeleted = :notDeleted', { notDeleted: false });
  if (isAdmin(caller)) return;
  qb.andWhere(
    new Brackets((w) => {
      w.where('s.ownerUserId = :callerUser', { callerUser: caller.userId })
        .orWhere('s.isPublic = :isPublic', { isPublic: true })
        .orWhere(
          'EXISTS (SELECT 1 FROM agent_session_participants vp WHERE vp.session_id = s.id AND vp.user_id = :callerUser)',
        );
    }),
  );
}

export function applyFilter(qb: SelectQueryBuilder<SessionRow>, caller: Caller, filter: SessionFilter): void {
  applyVisibility(qb, caller, filter.includeDeleted === true);
  if (filter.participantId != null) {
    // The owner is recorded as a participant when the session is created (DD-003).
    qb.andWhere(
      'EXISTS (SELECT 1 FROM agent_session_participants fp WHERE fp.session_id = s.id AND fp.user_id = :participantId)',
      { participantId: filter.participantId },
    );
  }
  const equal: [keyof SessionFilter & keyof SessionRow, string][] = [
    ['ownerUserId', 'ownerUserId'],
    ['agentContextId', 'agentContextId'],
    ['conversationContextId', 'conversationContextId'],
    ['workspaceId', 'workspaceId'],
    ['repo', 'repo'],
    ['lastTurnStatus', 'lastTurnStatus'],
  ];
  for (const [field, param] of equal) {
    const value = filter[field];
    if (value != null) qb.andWhere(`s.${field} = :${param}`, { [param]: value });
  }
  if (filter.updatedAfter) qb.andWhere('s.lastUpdatedDate > :updatedAfter', { updatedAfter: filter.updatedAfter });
  if (filter.updatedBefore) qb.andWhere('s.lastUpdatedDate < :updatedBefore', { updatedBefore: filter.updatedBefore });
  if (filter.search != null && filter.search !== '') {
    qb.andWhere(`LOWER(s.name) LIKE :search ESCAPE '!'`, { search: `%${escapeLike(filter.search.toLowerCase())}%` });
  }
}

const escapeLike = (text: string): string => text.replace(/[!%_]/g, (c) => `!${c}`);

interface OrderSpec {
  readonly column: 'lastUpdatedDate' | 'creationDate' | 'name';
  readonly direction: 'ASC' | 'DESC';
}

const ORDERS: Record<SessionOrder, OrderSpec> = {
  LAST_UPDATED_DESC: { column: 'lastUpdatedDate', direction: 'DESC' },
  LAST_UPDATED_ASC: { column: 'lastUpdatedDate', direction: 'ASC' },
  CREATED_DESC: { column: 'creationDate', direction: 'DESC' },
  NAME_ASC: { column: 'name', direction: 'ASC' },
};

/** Keyset pagination: (sort key, id) strictly after the cursor, in the order's direction. */
export function applyOrder(qb: SelectQueryBuilder<SessionRow>, order: SessionOrder, after: string | null): void {
  const spec = ORDERS[order];
  if (after !== null) {
    const position = decodeCursor(order, after);
    const key = spec.column === 'name' ? position.key : toDate(position);
    const cmp = spec.direction === 'ASC' ? '>' : '<';
    qb.andWhere(
      new Brackets((w) => {
        w.where(`s.${spec.column} ${cmp} :cursorKey`, { cursorKey: key }).orWhere(
          new Brackets((tie) => {
            tie.where(`s.${spec.column} = :cursorKey`).andWhere(`s.id ${cmp} :cursorId`, { cursorId: position.id });
          }),
        );
      }),
    );
  }
  qb.orderBy(`s.${spec.column}`, spec.direction).addOrderBy('s.id', spec.direction);
}

export function cursorOf(order: SessionOrder, row: SessionRow): string {
  const column = ORDERS[order].column;
  const key = column === 'name' ? row.name : row[column].toISOString();
  return encodeCursor(order, { key, id: row.id });
}

function toDate(position: CursorPosition): Date {
  const date = typeof position.key === 'string' ? new Date(position.key) : new Date(NaN);
  if (Number.isNaN(date.getTime())) throw malformedCursor();
  return date;
}
