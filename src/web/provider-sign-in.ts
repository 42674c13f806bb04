import * as oauth from 'oauth4webapi';
import { readClaims } from './token';

/**
 * Sign-in through the team's identity provider (issue 41): the authorization-code flow with
 * PKCE, the dashboard being a public client (no secret), by oauth4webapi. The access token
 * comes back in the token response body, never in an address; it is kept where a pasted one
 * is (sessionStorage, this tab). Only the one-time code passes through the address bar, and
 * it is taken out of it before anything else runs. No refresh token is asked for: near its
 * expiry the user goes through the provider again, which answers at once while its own
 * session lasts.
 */
export interface ProviderSettings {
  readonly issuer: string;
  readonly clientId: string;
  readonly scope: string;
  readonly authorizeParams: Readonly<Record<string, string>>;
}

/** What the gateway says about signing in (GET /dashboard/sign-in.json). */
export interface SignInSettings {
  readonly paste: boolean;
  readonly provider: ProviderSettings | null;
}

/** The PKCE verifier and state between leaving for the provider and coming back; removed on return. */
const PENDING_KEY = 'agent-session-gateway.sign-in';

interface Pending {
  readonly state: string;
  readonly verifier: string;
  /** The dashboard page (hash route) to return to. */
  readonly returnTo: string;
}

export async function loadSignInSettings(): Promise<SignInSettings> {
  try {
    const res = await fetch(new URL('/dashboard/sign-in.json', location.href), { cache: 'no-store' });
    if (res.ok) return (await res.json()) as SignInSettings;
  } catch {
    // An older gateway without the document: paste only, as before.
  }
  return { paste: true, provider: null };
}

const redirectUri = () => new URL('/dashboard/', location.href).href;
const client = (settings: ProviderSettings): oauth.Client => ({ client_id: settings.clientId });
/** Plain http is refused by the gateway's config in production; here it is a local provider. */
const options = (settings: ProviderSettings) => ({ [oauth.allowInsecureRequests]: new URL(settings.issuer).protocol === 'http:' });

async function discover(settings: ProviderSettings): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(settings.issuer);
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...options(settings) }));
}

/** Leaves for the provider's sign-in page. */
export async function beginProviderSignIn(settings: ProviderSettings, returnTo: string): Promise<void> {
  const as = await discover(settings);
  if (!as.authorization_endpoint) throw new Error('the identity provider publishes no authorization endpoint');
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint);
  for (const [key, value] of Object.entries(settings.authorizeParams)) url.searchParams.set(key, value);
  url.searchParams.set('client_id', settings.clientId);
  url.searchParams.set('redirect_uri', redirectUri());
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', settings.scope);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  url.searchParams.set('state', state);
  sessionStorage.setItem(PENDING_KEY, JSON.stringify({ state, verifier, returnTo } satisfies Pending));
  location.assign(url.href);
}

/** True when this load is the provider sending the user back (`?code=` or `?error=`). */
export function isProviderCallback(): boolean {
  const params = new URLSearchParams(location.search);
  return params.has('state') && (params.has('code') || params.has('error'));
}

/**
 * Trades the code for tokens and returns the access token. The address loses its `?code=…`
 * first, so a reload, a bookmark or a shared screen never carries it.
 */
export async function completeProviderSignIn(settings: ProviderSettings): Promise<string> {
  const callback = new URL(location.href);
  const raw = sessionStorage.getItem(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  const pending = raw ? (JSON.parse(raw) as Pending) : null;
  history.replaceState(null, '', `${location.pathname}${pending?.returnTo || '#/sessions'}`);
  if (!pending) throw new Error('this sign-in was not started in this tab (or was already completed)');
  const as = await discover(settings);
  let params: URLSearchParams;
  try {
    params = oauth.validateAuthResponse(as, client(settings), callback, pending.state);
  } catch (e) {
    if (e instanceof oauth.AuthorizationResponseError) throw new Error(e.error_description ?? e.error, { cause: e });
    throw e;
  }
  const response = await oauth.authorizationCodeGrantRequest(as, client(settings), oauth.None(), params, redirectUri(), pending.verifier, options(settings));
  const tokens = await oauth.processAuthorizationCodeResponse(as, client(settings), response);
  return tokens.access_token;
}

/** True when `token` was issued by the provider (its `iss`), so signing out should end the provider's session too. */
export function isProviderToken(settings: ProviderSettings | null, token: string): boolean {
  return settings !== null && readClaims(token)?.issuer === settings.issuer;
}

/** Ends the provider's session too when it offers an end-session endpoint; else false (the dashboard alone signed out). */
export async function signOutAtProvider(settings: ProviderSettings): Promise<boolean> {
  const as = await discover(settings).catch(() => null);
  if (!as?.end_session_endpoint) return false;
  const url = new URL(as.end_session_endpoint);
  url.searchParams.set('client_id', settings.clientId);
  url.searchParams.set('post_logout_redirect_uri', redirectUri());
  location.assign(url.href);
  return true;
}
