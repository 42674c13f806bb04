import type { Caller } from '../../../src/domain/caller';

/** A caller as a verified token describes it; the name and org name follow from the ids. */
export const user = (userId: string, orgId = 'acme', roles: string[] = []): Caller => ({
  userId,
  userName: `Name of ${userId}`,
  orgId,
  orgName: `Org ${orgId}`,
  roles,
});

export const admin = (userId = 'boss', orgId = 'acme'): Caller => user(userId, orgId, ['admin']);

/** The test users every suite shares: three members and an admin of org acme. */
export const alice = user('alice');
export const bob = user('bob');
export const carol = user('carol');
export const boss = admin('boss');
/** Alice's user id in another org: what she can see in acme must stay invisible to her. */
export const mallory = user('alice', 'globex');
/** An admin of the other org: admin rights never cross orgs. */
export const globexAdmin = admin('boss', 'globex');
