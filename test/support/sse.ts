import { createClient, type Client } from 'graphql-sse';
import type { SubscribingClient } from './ws';

/** A graphql-sse client (distinct connections) for `httpUrl`'s /graphql/stream, authenticating with `token`; no retries. */
export function sseClient(httpUrl: string, token: string | null): Client & SubscribingClient {
  return createClient({
    url: `${httpUrl}/graphql/stream`,
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
    retryAttempts: 0,
  });
}

/** One raw event-stream request; resolves with the status, the content type and the whole body once the server ends it. */
export async function rawStream(
  httpUrl: string,
  init: { method?: 'GET' | 'POST' | 'PUT'; token?: string | null; accept?: string; body?: unknown; query?: Record<string, string> },
): Promise<{ status: number; contentType: string | null; text: string }> {
  const url = new URL(`${httpUrl}/graphql/stream`);
  for (const [k, v] of Object.entries(init.query ?? {})) url.searchParams.set(k, v);
  const res = await fetch(url, {
    method: init.method ?? 'POST',
    headers: {
      accept: init.accept ?? 'text/event-stream',
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
    },
    ...(init.body !== undefined ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) } : {}),
  });
  return { status: res.status, contentType: res.headers.get('content-type'), text: await res.text() };
}

/** The events of a finished event-stream body, comments left out. */
export function eventsOf(text: string): { event: string; data: unknown }[] {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('event:'))
    .map((block) => {
      const [eventLine = '', dataLine = ''] = block.split('\n');
      const data = dataLine.slice('data:'.length).trim();
      return { event: eventLine.slice('event:'.length).trim(), data: data ? (JSON.parse(data) as unknown) : null };
    });
}
