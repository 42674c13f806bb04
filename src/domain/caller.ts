/** The authenticated user on whose behalf a request runs. Built once from the token. */
export interface Caller {
  readonly userId: string;
  readonly userName: string;
  readonly orgId: string;
  readonly orgName: string;
  readonly roles: readonly string[];
}

export const ADMIN_ROLE = 'admin';

export const isAdmin = (caller: Caller): boolean => caller.roles.includes(ADMIN_ROLE);

/** Spec EntityHeader: an id plus a display text. */
export interface EntityHeader {
  readonly id: string;
  readonly text: string;
}

export const userHeader = (caller: Caller): EntityHeader => ({ id: caller.userId, text: caller.userName });
export const orgHeader = (caller: Caller): EntityHeader => ({ id: caller.orgId, text: caller.orgName });

/** Whose data a system-side read or write (completing a turn, a DataLoader batch) may touch: one org. */
export interface OrgScope {
  readonly orgId: string;
}
