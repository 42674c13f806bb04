import { decodeProtectedHeader } from 'jose';
import { DomainError } from '../domain/errors';
import type { TokenVerifier, VerifiedToken } from './token-verifier.port';

const unauthenticated = (message: string) => new DomainError('UNAUTHENTICATED', message);

/**
 * Sends each token to the one verifier its algorithm belongs to: HS256 to the shared secret,
 * asymmetric algorithms to the identity provider's keys. Neither ever sees the other's tokens,
 * so a provider's public key can never be tried as an HMAC secret (nor the secret as a key).
 */
export class AlgorithmRoutingVerifier implements TokenVerifier {
  constructor(private readonly verifiers: { readonly sharedSecret: TokenVerifier | null; readonly provider: TokenVerifier | null }) {}

  verify(token: string, now: Date): Promise<VerifiedToken> {
    let alg: unknown;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch {
      return Promise.reject(unauthenticated('invalid token'));
    }
    const { sharedSecret, provider } = this.verifiers;
    if (alg === 'HS256') {
      return sharedSecret
        ? sharedSecret.verify(token, now)
        : Promise.reject(unauthenticated('HS256 tokens are not accepted: this gateway takes tokens from its identity provider (AUTH_ISSUER)'));
    }
    if (typeof alg !== 'string' || alg === 'none' || alg.startsWith('HS') || !provider) {
      return Promise.reject(unauthenticated('invalid token'));
    }
    return provider.verify(token, now);
  }
}
