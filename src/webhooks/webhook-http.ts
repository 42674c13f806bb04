import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupAddress } from 'node:dns';
import { isPrivateAddress } from './address-policy';
import { hostAddress, isLocalhost, retryAfterMs, type AttemptOutcome } from './webhook-rules';

/** Resolves a host name to its addresses (dns.lookup by default; tests give their own, so no test needs real DNS). */
export type Resolve = (hostname: string) => Promise<readonly LookupAddress[]>;

export const systemResolve: Resolve = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface SendRules {
  readonly production: boolean;
  readonly allowPrivateNetworks: boolean;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  readonly resolve: Resolve;
}

export interface WebhookRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** What one attempt came to, with how long it took. */
export interface SentAttempt {
  readonly outcome: AttemptOutcome;
  readonly durationMs: number;
}

/** A refusal of the address, not a failure of the network: no retry changes it. */
class AddressRefused extends Error {}

/** Characters of a failing response's body kept in the attempt's error. */
const ERROR_EXCERPT = 200;

/**
 * POSTs one delivery, safe to point at the internet: https only in production (http for
 * localhost otherwise), the host's addresses resolved and checked at this very send (none may
 * be loopback, private, link-local or metadata unless allowed) and the connection made to the
 * address that was checked, so a DNS answer that changes between check and connect (rebinding)
 * gains nothing. No redirect is followed; the whole attempt has `timeoutMs`; at most
 * `maxResponseBytes` of the answer are read.
 */
export async function sendWebhook(request: WebhookRequest, rules: SendRules, now: () => Date = () => new Date()): Promise<SentAttempt> {
  const started = Date.now();
  const done = (outcome: AttemptOutcome): SentAttempt => ({ outcome, durationMs: Date.now() - started });
  let url: URL;
  try {
    url = new URL(request.url);
    checkTarget(url, rules);
  } catch (e) {
    return done({ kind: 'rejected', statusCode: null, error: (e as Error).message });
  }
  try {
    const response = await post(url, request, rules);
    const { statusCode, excerpt, retryAfter } = response;
    if (statusCode >= 200 && statusCode < 300) return done({ kind: 'delivered', statusCode });
    if (statusCode === 410) return done({ kind: 'gone', statusCode: 410 });
    const error = `HTTP ${statusCode}${excerpt ? `: ${excerpt}` : ''}`;
    if (statusCode >= 300 && statusCode < 400) return done({ kind: 'rejected', statusCode, error: `HTTP ${statusCode}: redirects are not followed` });
    if (statusCode === 429 || statusCode === 408 || statusCode >= 500) {
      return done({ kind: 'retryable', statusCode, error, retryAfterMs: retryAfterMs(retryAfter, now()) });
    }
    return done({ kind: 'rejected', statusCode, error });
  } catch (e) {
    if (e instanceof AddressRefused) return done({ kind: 'rejected', statusCode: null, error: e.message });
    return done({ kind: 'retryable', statusCode: null, error: connectionError(e), retryAfterMs: null });
  }
}

function checkTarget(url: URL, rules: SendRules): void {
  if (url.protocol === 'https:') return checkLiteral(url, rules);
  if (url.protocol === 'http:' && !rules.production && isLocalhost(url.hostname)) return checkLiteral(url, rules);
  throw new Error(rules.production ? 'refused: only https:// URLs are allowed in production' : 'refused: http:// is allowed for localhost only');
}

/** A literal address is never looked up: it is judged here. */
function checkLiteral(url: URL, rules: SendRules): void {
  const literal = hostAddress(url.hostname);
  if (literal && !rules.allowPrivateNetworks && isPrivateAddress(literal)) throw new Error(`refused: ${literal} is a private, loopback or link-local address`);
}

interface Answer {
  readonly statusCode: number;
  readonly excerpt: string;
  readonly retryAfter: string | undefined;
}

function post(url: URL, request: WebhookRequest, rules: SendRules): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const options: RequestOptions = {
      method: 'POST',
      hostname: hostAddress(url.hostname) ?? url.hostname,
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
      // A fresh connection per attempt: its address is looked up and checked for this attempt.
      agent: false,
      lookup: checkedLookup(rules),
    };
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(options, (res) => {
      readLimited(res, rules.maxResponseBytes).then(
        (body) => {
          clearTimeout(timer);
          resolve({ statusCode: res.statusCode ?? 0, excerpt: body.slice(0, ERROR_EXCERPT).trim(), retryAfter: header(res, 'retry-after') });
        },
        (e: unknown) => {
          clearTimeout(timer);
          reject(e instanceof Error ? e : new Error(String(e)));
        },
      );
    });
    const timer = setTimeout(() => req.destroy(new Error(`timed out after ${rules.timeoutMs} ms`)), rules.timeoutMs);
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.end(request.body);
  });
}

/**
 * The lookup the connection uses: every address of the name is checked, and the connection
 * goes to the first one, the address that was checked. A name with any refused address is
 * refused whole (a mix of public and private answers is how rebinding starts).
 */
function checkedLookup(rules: SendRules): NonNullable<RequestOptions['lookup']> {
  return (hostname, options, callback) => {
    rules.resolve(hostname).then(
      (addresses) => {
        const refused = rules.allowPrivateNetworks ? undefined : addresses.find((a) => isPrivateAddress(a.address));
        const [first] = addresses;
        if (refused) return callback(new AddressRefused(`refused: ${hostname} resolves to ${refused.address}, a private, loopback or link-local address`), '', 4);
        if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 4);
        // Node asks for all addresses when it may try several (autoSelectFamily): it gets the checked one only.
        if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, [first]);
        return callback(null, first.address, first.family);
      },
      (e: unknown) => callback(e as NodeJS.ErrnoException, '', 4),
    );
  };
}

/** The body's first `max` bytes as text; a longer body is cut off, the connection dropped. */
function readLimited(res: IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      if (size >= max) return;
      const room = max - size;
      chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
      size += Math.min(chunk.length, room);
      if (size >= max) {
        res.destroy();
        resolve(Buffer.concat(chunks).toString('utf8'));
      }
    });
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
    res.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

const header = (res: IncomingMessage, name: string): string | undefined => {
  const value = res.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

function connectionError(e: unknown): string {
  const error = e as NodeJS.ErrnoException;
  return error.code ? `${error.code}: ${error.message}` : (error.message ?? String(e));
}
