import { createSecretKey, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { DomainError } from '../domain/errors';
import { DEFAULT_CLAIMS } from './auth-config';
import { callerFromClaims } from './claims';
import type { TokenVerifier, VerifiedToken } from './token-verifier.port';

const unauthenticated = (message: string) => new DomainError('UNAUTHENTICATED', message);

/**
 * HS256 tokens signed with JWT_SECRET (`npm run token`, service-to-service): the gateway's own
 * shape, so always the default claim names whatever AUTH_CLAIM_* says about the provider's.
 */
export class SharedSecretTokenVerifier implements TokenVerifier {
  /**
   * Given a string, jsonwebtoken first tries (and fails) to read it as a public key, then
   * builds a secret key: about half a millisecond per call. The key object is built once.
   */
  private readonly key: KeyObject;

  constructor(secret: string) {
    this.key = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  verify(token: string, now: Date): Promise<VerifiedToken> {
    let payload: string | jwt.JwtPayload;
    try {
      payload = jwt.verify(token, this.key, { algorithms: ['HS256'], clockTimestamp: Math.floor(now.getTime() / 1000) });
    } catch (e) {
      return Promise.reject(unauthenticated(e instanceof jwt.TokenExpiredError ? 'token expired' : 'invalid token'));
    }
    if (typeof payload === 'string') return Promise.reject(unauthenticated('invalid token'));
    if (typeof payload.exp !== 'number') return Promise.reject(unauthenticated('token has no expiry ("exp")'));
    try {
      const expiresAt = new Date(payload.exp * 1000);
      return Promise.resolve({ caller: callerFromClaims(payload, DEFAULT_CLAIMS), expiresAt, reuseUntil: expiresAt });
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
  }
}
