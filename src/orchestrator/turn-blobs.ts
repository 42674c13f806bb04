import { contentTypeOf, type BlobStore } from '../blobs/blob-store.port';
import { fileBlobKey, resolveBlobPath, TURN_BLOBS, turnBlobKey, turnBlobUrl, type TurnBlobName } from '../domain/blob-keys';

/** Where the blob route serves the URLs turns store (`/blobs/sessions/...`). */
const BLOB_ROUTE = '/blobs';

/** One provider round as stored in the raw response payload blob. */
export interface ResponseLogEntry {
  /** Answer deltas this round streamed (the next round's output index continues after them). */
  readonly streamedDeltas: number;
  readonly response?: unknown;
  readonly error?: string;
}

/**
 * The blobs of one turn (DD-005): full instruction, full answer, and the raw provider
 * payloads, which hold one entry per provider round (tool continuations add rounds).
 */
export class TurnBlobs {
  constructor(
    private readonly blobs: BlobStore,
    private readonly orgId: string,
    private readonly sessionId: string,
    private readonly turnId: string,
  ) {}

  async put(name: TurnBlobName, body: string): Promise<string> {
    const key = turnBlobKey(this.orgId, this.sessionId, this.turnId, name);
    await this.blobs.put(key, body, contentTypeOf(key));
    return turnBlobUrl(this.sessionId, this.turnId, name);
  }

  getText(name: TurnBlobName): Promise<string | null> {
    return this.blobs.getText(turnBlobKey(this.orgId, this.sessionId, this.turnId, name));
  }

  /**
   * A text by the URL the turn stores for it, else by its name: a fork's copied turns keep
   * their source's URLs, so their texts are read where the source's turn stored them.
   */
  getTextAt(url: string | null, name: TurnBlobName): Promise<string | null> {
    const resolved = url?.startsWith(BLOB_ROUTE) ? resolveBlobPath(this.orgId, url.slice(BLOB_ROUTE.length)) : null;
    return resolved ? this.blobs.getText(resolved.key) : this.getText(name);
  }

  /** Appends the request of a round to the raw request payload; returns its URL. */
  appendRequest(payload: unknown, continued: boolean): Promise<string> {
    return this.append(TURN_BLOBS.request, payload, continued);
  }

  appendResponse(entry: ResponseLogEntry, continued: boolean): Promise<string> {
    return this.append(TURN_BLOBS.response, entry, continued);
  }

  /** Deltas the earlier rounds streamed, so a continued turn's output index stays gap-free. */
  async streamedDeltas(): Promise<number> {
    const entries = (await this.readLog(TURN_BLOBS.response)) as ResponseLogEntry[];
    return entries.reduce((n, e) => n + (e.streamedDeltas ?? 0), 0);
  }

  private async append(name: TurnBlobName, entry: unknown, continued: boolean): Promise<string> {
    const entries = continued ? await this.readLog(name) : [];
    return this.put(name, JSON.stringify([...entries, entry]));
  }

  private async readLog(name: TurnBlobName): Promise<unknown[]> {
    const text = await this.getText(name);
    const parsed: unknown = text ? JSON.parse(text) : [];
    return Array.isArray(parsed) ? (parsed as unknown[]) : [];
  }
}

/** Active-file versions of one session, content-addressed, for re-sending on a new chain. */
export class SessionFiles {
  constructor(
    private readonly blobs: BlobStore,
    private readonly orgId: string,
    private readonly sessionId: string,
  ) {}

  async put(contentHash: string, content: string): Promise<void> {
    const key = fileBlobKey(this.orgId, this.sessionId, contentHash);
    await this.blobs.put(key, content, contentTypeOf(key));
  }

  get(contentHash: string): Promise<string | null> {
    return this.blobs.getText(fileBlobKey(this.orgId, this.sessionId, contentHash));
  }
}
