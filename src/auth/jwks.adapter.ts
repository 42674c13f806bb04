import { createRemoteJWKSet, errors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { DomainError } from '../domain/errors';
import type { Logger } from '../logger.port';
import type { OidcConfig } from './auth-config';
import { callerFromClaims } from './claims';
import type { TokenVerifier, VerifiedToken } from './token-verifier.port';

const unauthenticated = (message: string) => new DomainError('UNAUTHENTICATED', message);
const unavailable = () => new DomainError('SERVICE_UNAVAILABLE', "the identity provider's signing keys cannot be fetched right now; try again shortly");

/**
 * Tokens of an OpenID Provider, checked with `jose`: signature by a key of the provider's
 * JWKS (found through discovery from AUTH_ISSUER, or AUTH_JWKS_URL), algorithm in the
 * allow-list, `iss`, `aud`, `exp` and `nbf` within the tolerated skew. Keys are cached for
 * AUTH_JWKS_CACHE_SECONDS and fetched again early when a token names an unknown `kid`, at most
 * once per AUTH_JWKS_COOLDOWN_SECONDS. A provider that cannot be reached is SERVICE_UNAVAILABLE
 * (503), never a crash and never a sign-out of users whose tokens may be fine.
 */
export class JwksTokenVerifier implements TokenVerifier {
  private keySet: Promise<JWTVerifyGetKey> | null = null;
  private discoveryFailedAt = 0;

  constructor(
    private readonly config: OidcConfig,
    private readonly logger: Logger,
  ) {}

  async verify(token: string, now: Date): Promise<VerifiedToken> {
    const { config } = this;
    const keys = await this.keys();
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: config.issuer ?? undefined,
        audience: [...config.audiences],
        algorithms: [...config.algorithms],
        clockTolerance: config.clockToleranceSeconds,
        currentDate: now,
        requiredClaims: ['exp'],
      }));
    } catch (e) {
      throw this.refusal(e);
    }
    const expiresAt = new Date((payload.exp as number) * 1000);
    const caller = callerFromClaims(payload, config.claims);
    // A key retired at the provider stops working once the key set is fetched again.
    const reuseUntil = new Date(Math.min(expiresAt.getTime(), now.getTime() + config.jwksCacheSeconds * 1000));
    return { caller, expiresAt, reuseUntil };
  }

  /** The key set, discovered once; a failed discovery is retried after the cooldown, not on every request. */
  private keys(): Promise<JWTVerifyGetKey> {
    if (this.keySet) return this.keySet;
    const cooldownMs = Math.max(this.config.jwksCooldownSeconds * 1000, 1000);
    if (Date.now() - this.discoveryFailedAt < cooldownMs) return Promise.reject(unavailable());
    const pending = this.jwksUrl().then((url) =>
      createRemoteJWKSet(url, {
        timeoutDuration: this.config.jwksTimeoutMs,
        cooldownDuration: this.config.jwksCooldownSeconds * 1000,
        cacheMaxAge: this.config.jwksCacheSeconds * 1000,
      }),
    );
    this.keySet = pending;
    pending.catch((err: unknown) => {
      this.logger.warn({ err, issuer: this.config.issuer }, 'OpenID Provider discovery failed; tokens are answered 503 until it succeeds');
      this.discoveryFailedAt = Date.now();
      if (this.keySet === pending) this.keySet = null;
    });
    return pending.catch(() => Promise.reject(unavailable()));
  }

  private async jwksUrl(): Promise<URL> {
    const { issuer, jwksUrl, jwksTimeoutMs } = this.config;
    if (jwksUrl) return new URL(jwksUrl);
    const discovery = `${issuer!.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    const response = await fetch(discovery, { signal: AbortSignal.timeout(jwksTimeoutMs), redirect: 'error' });
    if (!response.ok) throw new Error(`${discovery} answered ${response.status}`);
    const document = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
    // OpenID Connect Discovery 1.0, section 4.3: the document must name the issuer it was fetched for.
    if (document.issuer !== issuer) throw new Error(`${discovery} names issuer ${JSON.stringify(document.issuer)}, not ${issuer}`);
    if (typeof document.jwks_uri !== 'string' || !URL.canParse(document.jwks_uri)) throw new Error(`${discovery} has no usable jwks_uri`);
    return new URL(document.jwks_uri);
  }

  private refusal(e: unknown): DomainError {
    if (e instanceof errors.JWTExpired) return unauthenticated('token expired');
    if (e instanceof errors.JWTClaimValidationFailed) {
      return unauthenticated(e.claim === 'nbf' ? 'token not valid yet ("nbf")' : `token refused: ${e.message}`);
    }
    if (e instanceof errors.JOSEAlgNotAllowed) return unauthenticated(`token algorithm not accepted (AUTH_ALGORITHMS: ${this.config.algorithms.join(', ')})`);
    if (e instanceof errors.JWKSNoMatchingKey) return unauthenticated("token not signed by a key of the identity provider");
    if (e instanceof errors.JWSSignatureVerificationFailed) return unauthenticated('invalid token signature');
    // The key set could not be fetched (timeout, refused, not 200, not JSON): not the token's fault.
    if (e instanceof errors.JWKSTimeout || e instanceof errors.JWKSInvalid || !(e instanceof errors.JOSEError) || e.code === 'ERR_JOSE_GENERIC') {
      this.logger.warn({ err: e, issuer: this.config.issuer }, "the identity provider's key set could not be fetched");
      return unavailable();
    }
    return unauthenticated('invalid token');
  }
}
