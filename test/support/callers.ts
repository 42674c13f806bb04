import type { Caller } from '../../src/domain/caller';

export const user = (userId: string, orgId = 'acme', roles: string[] = []): Caller => ({
  userId,
  userName: `Name of ${userId}`,
  orgId,
  orgName: `Org ${orgId}`,
  roles,
});

export const admin = (userId = 'boss', orgId = 'acme'): Caller => user(userId, orgId, ['admin']);
