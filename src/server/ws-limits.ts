import type { DocumentNode } from 'graphql';
import type { Caller } from '../domain/caller';

/**
 * Every close code the gateway's WebSocket server sends: graphql-transport-ws's own (the
 * same values as graphql-ws's CloseCode), 1009 for an oversized message (sent by ws), and
 * the gateway's: the per-user connection limit, the token bound, slow consumers.
 */
export enum GatewayCloseCode {
  /** Shutdown (a deploy): the client reconnects, through the balancer to another instance, and resumes. */
  ServiceRestart = 1012,
  /** A message larger than WS_MAX_PAYLOAD_BYTES (sent by ws itself). */
  MessageTooBig = 1009,
  /** Not a graphql-transport-ws message. */
  BadRequest = 4400,
  /** `subscribe` before the connection was acknowledged. */
  Unauthorized = 4401,
  /** Missing, malformed, wrongly signed or expired token (also when it expires later). */
  Forbidden = 4403,
  /** The client does not speak graphql-transport-ws. */
  SubprotocolNotAcceptable = 4406,
  /** No `connection_init` within WS_CONNECTION_INIT_TIMEOUT_MS. */
  ConnectionInitialisationTimeout = 4408,
  /** An operation id reused while it runs. */
  SubscriberAlreadyExists = 4409,
  /**
   * More than WS_MAX_BUFFERED_BYTES waiting to be sent: the client does not read fast enough.
   * Its operations have ended; it reconnects and resumes with afterEventId.
   */
  SlowConsumer = 4413,
  /**
   * A second `connection_init` on one socket, or one WebSocket more than
   * WS_MAX_CONNECTIONS_PER_USER for this user on this instance (the reason says which).
   */
  TooManyRequests = 4429,
  /** The token in `connection_init` is longer than an HTTP header may be (HTTP answers 431). */
  TokenTooLarge = 4431,
  /** The identity provider's keys cannot be fetched right now (clients retry this code). */
  TryAgainLater = 1013,
  /** An unexpected server error. */
  InternalServerError = 4500,
}

/** Node refuses request headers over 16 KiB with 431; a `connection_init` token gets the same bound. */
export const MAX_TOKEN_BYTES = 16 * 1024;

/** The key a user's connections are counted under: ids are unique within an org only. */
export const userKeyOf = (caller: Pick<Caller, 'orgId' | 'userId'>): string => `${caller.orgId}\n${caller.userId}`;

/** Connections (WebSockets, or SSE streams) per user on this instance. */
export class ConnectionsPerUser {
  private readonly open = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** Counts one more socket for `user`; false (and nothing counted) when the user is at the limit. */
  tryOpen(user: string): boolean {
    const count = this.open.get(user) ?? 0;
    if (count >= this.max) return false;
    this.open.set(user, count + 1);
    return true;
  }

  close(user: string): void {
    const count = (this.open.get(user) ?? 0) - 1;
    if (count > 0) this.open.set(user, count);
    else this.open.delete(user);
  }
}

/**
 * A parsed document holds a few hundred bytes per lexical token (AST nodes, tokens,
 * locations) besides its text; string literals share the text. Rounded up from what
 * docs/performance.md records for graphql 16.
 */
const BYTES_PER_TOKEN = 600;

/** What a cached document costs in memory, estimated from its text and token count. */
export function documentWeight(query: string, document: DocumentNode): number {
  let tokens = 0;
  for (let token = document.loc?.startToken ?? null; token; token = token.next) tokens++;
  return 2 * query.length + BYTES_PER_TOKEN * tokens;
}

/**
 * Valid documents by query text, bounded by their estimated weight in bytes (not by count:
 * a few huge documents would otherwise hold gigabytes); least recently used dropped first.
 * A document heavier than a sixteenth of the budget is not kept at all.
 */
export class DocumentCache {
  private readonly entries = new Map<string, { readonly document: DocumentNode; readonly weight: number }>();
  private total = 0;

  constructor(private readonly maxBytes: number) {}

  /** Estimated bytes held right now. */
  get bytes(): number {
    return this.total;
  }

  get(query: string): DocumentNode | undefined {
    const entry = this.entries.get(query);
    if (entry) {
      this.entries.delete(query);
      this.entries.set(query, entry);
    }
    return entry?.document;
  }

  set(query: string, document: DocumentNode): void {
    const weight = documentWeight(query, document);
    if (weight > this.maxBytes / 16 || this.entries.has(query)) return;
    this.entries.set(query, { document, weight });
    this.total += weight;
    for (const [oldest, entry] of this.entries) {
      if (this.total <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.total -= entry.weight;
    }
  }
}
