import { createSecretKey, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Caller } from '../domain/caller';
import { DomainError } from '../domain/errors';
import { idProblem, MAX_ID_LENGTH } from '../domain/ids';

export interface Authenticated {
  readonly caller: Caller;
  /** When the token stops being valid; long-lived sockets close then. */
  readonly expiresAt: Date;
}

const unauthenticated = (message: string) => new DomainError('UNAUTHENTICATED', message);
const MAX_NAME = 200;

/** Parses an `Authorization: Bearer <jwt>` value (HS256 only) into the caller it names. */
export function authenticate(authorization: string | undefined | null, secret: string, now = new Date()): Authenticated {
  if (!authorization) throw unauthenticated('missing bearer token');
  const match = /^Bearer\s+(\S+)$/i.exec(authorization.trim());
  const token = match?.[1];
  if (!token) throw unauthenticated('the Authorization header must be "Bearer <token>"');
  const clock = Math.floor(now.getTime() / 1000);
  const known = verified.get(token);
  // The same expiry test as jsonwebtoken's (expired once the clock reaches exp).
  if (known?.secret === secret && clock < known.exp) return known.authenticated;
  let payload: string | jwt.JwtPayload;
  try {
    payload = jwt.verify(token, keyOf(secret), { algorithms: ['HS256'], clockTimestamp: clock });
  } catch (e) {
    throw unauthenticated(e instanceof jwt.TokenExpiredError ? 'token expired' : 'invalid token');
  }
  if (typeof payload === 'string') throw unauthenticated('invalid token');
  const exp = requireExp(payload);
  const authenticated: Authenticated = Object.freeze({ caller: claimsToCaller(payload), expiresAt: new Date(exp * 1000) });
  remember(token, { secret, exp, authenticated });
  return authenticated;
}

/**
 * Tokens that verified, by their text: a client sends the same token with every request,
 * and checking its signature and claims again was ~3% of a list request's CPU. Only
 * successes are kept (a refused token is checked every time), each until its `exp`; the
 * oldest entry goes when the cache is full, so a flood of distinct tokens costs a bounded
 * amount of memory and merely misses.
 */
interface VerifiedToken {
  readonly secret: string;
  /** Seconds since the epoch, as in the claim. */
  readonly exp: number;
  readonly authenticated: Authenticated;
}

const VERIFIED_TOKENS = 1_000;
const verified = new Map<string, VerifiedToken>();

function remember(token: string, entry: VerifiedToken): void {
  verified.delete(token);
  if (verified.size >= VERIFIED_TOKENS) verified.delete(verified.keys().next().value as string);
  verified.set(token, entry);
}

/**
 * Given a string, jsonwebtoken first tries (and fails) to read it as a public key, then
 * builds a secret key: about half a millisecond on every request and every WebSocket
 * handshake. The key object is built once instead.
 */
const keys = new Map<string, KeyObject>();
function keyOf(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) keys.set(secret, (key = createSecretKey(Buffer.from(secret, 'utf8'))));
  return key;
}

function claimsToCaller(claims: jwt.JwtPayload): Caller {
  const userId = id(claims.sub, 'sub');
  const orgId = id(claims.org, 'org');
  const roles = claims.roles ?? [];
  if (!Array.isArray(roles) || !roles.every((r): r is string => typeof r === 'string' && r.length <= MAX_ID_LENGTH && r.isWellFormed())) {
    throw unauthenticated(`token claim "roles" must be an array of well-formed strings of at most ${MAX_ID_LENGTH} characters`);
  }
  // Frozen: one verified token's caller serves every request that sends it.
  return Object.freeze({
    userId,
    userName: name(claims.name, userId, 'name'),
    orgId,
    orgName: name(claims.orgName, orgId, 'orgName'),
    roles: Object.freeze([...roles]),
  });
}

function requireExp(claims: jwt.JwtPayload): number {
  if (typeof claims.exp !== 'number') throw unauthenticated('token has no expiry ("exp")');
  return claims.exp;
}

/** `sub` and `org` follow the id rule (domain/ids.ts): an ill-formed one could alias another user or org in the database. */
function id(value: unknown, claim: string): string {
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

export interface TokenClaims {
  readonly userId: string;
  readonly userName?: string;
  readonly orgId: string;
  readonly orgName?: string;
  readonly roles?: readonly string[];
}

/** Issues a token in the shape `authenticate` accepts (local use and tests). */
export function issueToken(claims: TokenClaims, secret: string, ttlSeconds = 12 * 3600): string {
  return jwt.sign(
    {
      name: claims.userName ?? claims.userId,
      org: claims.orgId,
      orgName: claims.orgName ?? claims.orgId,
      roles: [...(claims.roles ?? [])],
    },
    secret,
    { algorithm: 'HS256', subject: claims.userId, expiresIn: ttlSeconds },
  );
}
