import type { FormattedExecutionResult } from 'graphql';
import { GatewayError, fromGraphQLErrors } from './errors';
import { currentToken, type TokenSource } from './transport';

export interface HttpOptions {
  /** http(s)://host:port/graphql */
  readonly url: string;
  readonly token: TokenSource;
  readonly fetch: typeof fetch;
}

export interface RequestOptions {
  readonly signal?: AbortSignal;
}

/** One GraphQL operation over HTTP POST; the data, or a GatewayError carrying the server's code. */
export async function postOperation(
  http: HttpOptions,
  body: { query: string; operationName: string | null; variables: unknown },
  options: RequestOptions = {},
): Promise<Record<string, unknown>> {
  const response = await send(http, http.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${await currentToken(http.token)}` },
    body: JSON.stringify(body),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  let result: FormattedExecutionResult;
  try {
    result = (await response.json()) as FormattedExecutionResult;
  } catch {
    throw new GatewayError('BAD_RESPONSE', `the gateway answered HTTP ${response.status} without a GraphQL response`, response.status);
  }
  if (result.errors?.length) throw fromGraphQLErrors(result.errors, response.status);
  if (!result.data) throw new GatewayError('BAD_RESPONSE', 'the gateway answered without data', response.status);
  return result.data;
}

/**
 * GET of a gateway URL that needs the bearer token (the full instruction and answer texts
 * stored on turns, `/blobs/...`). Relative URLs are resolved against the GraphQL URL.
 */
export async function getText(http: HttpOptions, path: string, options: RequestOptions = {}): Promise<string> {
  const target = new URL(path, http.url);
  if (target.origin !== new URL(http.url).origin) throw new GatewayError('BAD_USER_INPUT', 'only gateway URLs get the token');
  const response = await send(http, target.toString(), {
    headers: { authorization: `Bearer ${await currentToken(http.token)}` },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (response.ok) return response.text();
  const body = (await response.json().catch(() => null)) as { errorCode?: unknown; errorMessage?: unknown } | null;
  const code = typeof body?.errorCode === 'string' ? body.errorCode : response.status === 401 ? 'UNAUTHENTICATED' : 'BAD_RESPONSE';
  const message = typeof body?.errorMessage === 'string' ? body.errorMessage : `HTTP ${response.status}`;
  throw new GatewayError(code, message, response.status);
}

async function send(http: HttpOptions, url: string, init: RequestInit): Promise<Response> {
  try {
    return await http.fetch(url, init);
  } catch (e) {
    throw new GatewayError('NETWORK_ERROR', `the gateway could not be reached: ${e instanceof Error ? e.message : String(e)}`);
  }
}
