import type { Caller } from '../domain/caller';
import { ADMIN_ROLE } from '../domain/caller';
import { DomainError } from '../domain/errors';
import { idProblem, MAX_ID_LENGTH } from '../domain/ids';
import type { ClaimMapping } from './auth-config';

const MAX_NAME = 200;
const unauthenticated = (message: string) => new DomainError('UNAUTHENTICATED', message);

/**
 * A claim by name: the exact key first (a namespaced claim such as `https://acme.example/org`
 * has dots of its own), then a dotted path into nested objects (`realm_access.roles`).
 */
export function claimAt(claims: Readonly<Record<string, unknown>>, name: string): unknown {
  if (Object.hasOwn(claims, name)) return claims[name];
  let value: unknown = claims;
  for (const part of name.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** The caller a verified token's claims name; 401 naming the claim when one is missing or unusable. */
export function callerFromClaims(claims: Readonly<Record<string, unknown>>, mapping: ClaimMapping): Caller {
  const userId = id(claimAt(claims, mapping.user), mapping.user);
  const orgId = id(claimAt(claims, mapping.org), mapping.org);
  const nameClaim = [mapping.name, 'preferred_username', 'email'].find((c) => claimAt(claims, c) !== undefined) ?? mapping.name;
  // Frozen: one verified token's caller serves every request that sends it.
  return Object.freeze({
    userId,
    userName: name(claimAt(claims, nameClaim), userId, nameClaim),
    orgId,
    orgName: name(claimAt(claims, mapping.orgName), orgId, mapping.orgName),
    roles: Object.freeze(roles(claimAt(claims, mapping.roles), mapping)),
  });
}

/**
 * The provider's admin role becomes the gateway's `admin`; when they differ, a provider role
 * that happens to be called `admin` grants nothing.
 */
function roles(value: unknown, mapping: ClaimMapping): string[] {
  if (value === undefined) return [];
  const list = typeof value === 'string' ? value.split(' ').filter(Boolean) : value;
  if (!Array.isArray(list) || !list.every((r): r is string => typeof r === 'string' && r.length <= MAX_ID_LENGTH && r.isWellFormed())) {
    throw unauthenticated(`token claim "${mapping.roles}" must be an array (or a space-separated string) of well-formed strings of at most ${MAX_ID_LENGTH} characters`);
  }
  if (mapping.adminRole === ADMIN_ROLE) return [...list];
  return list.filter((r) => r !== ADMIN_ROLE).map((r) => (r === mapping.adminRole ? ADMIN_ROLE : r));
}

/** User and org ids follow the id rule (domain/ids.ts): an ill-formed one could alias another user or org in the database. */
function id(value: unknown, claim: string): string {
  if (value === undefined) throw unauthenticated(`token has no "${claim}" claim`);
  if (typeof value !== 'string') throw unauthenticated(`token claim "${claim}" must be a string`);
  const problem = idProblem(value);
  if (problem) throw unauthenticated(`token claim "${claim}" ${problem}`);
  return value;
}

/** Names are stored with the user's turns and sessions, so they must be well-formed too. */
function name(value: unknown, fallback: string, claim: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || value.length > MAX_NAME || !value.isWellFormed()) {
    throw unauthenticated(`token claim "${claim}" must be well-formed text of at most ${MAX_NAME} characters`);
  }
  return value || fallback;
}
