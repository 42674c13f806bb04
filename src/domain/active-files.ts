import { createHash } from 'node:crypto';
import { badInput } from './errors';
import type { ActiveFileRef } from './turn';

/** Spec 001 section 5.3: a file larger than this is never sent to the model. */
export const MAX_SENDABLE_FILE_BYTES = 100 * 1024;
export const MAX_ACTIVE_FILES = 200;
const MAX_PATH = 1024;
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** An active file as a client submitted it, already normalised by the request handler. */
export interface ActiveFileSubmission {
  readonly path: string;
  /** Full current content; null means "unchanged since an earlier turn" (contentHash required). */
  readonly content: string | null;
  readonly contentHash: string | null;
  readonly isTouched: boolean;
  /** The client's size of the file; with contentHash and no content, a file over 100 KB is sent as metadata only. */
  readonly sizeBytes?: number | null;
}

/** A lookup by key; FileHistory's are answered lazily (newestFirst). */
export interface Lookup<K, V> {
  get(key: K): V | undefined;
  has(key: K): boolean;
}

/** What the session already knows about file versions (spec 001 section 6). */
export interface FileHistory {
  /** Per path, the hash of the version the model last received in the live chain. Empty on a new chain. */
  readonly sentInChain: Lookup<string, string>;
  /** Size in bytes of every content hash recorded on an earlier turn of the session. */
  readonly knownSizes: Lookup<string, number>;
}

/**
 * How one file reaches the model: `inline` sends the submitted content, `stored` sends the
 * content the gateway kept from an earlier turn (a new chain must carry it again), `none`
 * sends nothing (too large, or the model already has this version).
 */
export type FileDelivery = 'inline' | 'stored' | 'none';

export interface PlannedFile {
  readonly ref: ActiveFileRef;
  readonly delivery: FileDelivery;
  /** The submitted content when delivery is `inline`, else null. */
  readonly content: string | null;
}

export interface ActiveFilesPlan {
  readonly files: readonly PlannedFile[];
  readonly warnings: readonly string[];
}

export const sha256Hex = (text: string | Buffer): string => createHash('sha256').update(text).digest('hex');

/** Workspace-relative, forward slashes, no leading "./": one spelling per file whatever the client. */
export function normalisePath(raw: string): string {
  const path = raw.trim().replace(/\\/g, '/').replace(/\/{2,}/g, '/').replace(/^(\.\/)+/, '');
  if (path.length === 0) throw badInput('active file path must not be empty', { field: 'activeFiles.path' });
  if (path.length > MAX_PATH) throw badInput(`active file path must be at most ${MAX_PATH} characters`, { field: 'activeFiles.path' });
  if (path.includes('\0')) throw badInput('active file path must not contain NUL', { field: 'activeFiles.path' });
  return path;
}

/**
 * Spec 001 sections 5-6: hash every file (SHA-256), never send one over 100 KB, and inside a
 * live chain do not re-send a version the model already received. Every file is recorded.
 */
export function planActiveFiles(files: readonly ActiveFileSubmission[], history: FileHistory): ActiveFilesPlan {
  if (files.length > MAX_ACTIVE_FILES) throw badInput(`at most ${MAX_ACTIVE_FILES} active files`, { field: 'activeFiles' });
  const seen = new Set<string>();
  const warnings: string[] = [];
  const planned = files.map((file) => {
    if (seen.has(file.path)) throw badInput(`active file ${file.path} is listed twice`, { field: 'activeFiles.path' });
    seen.add(file.path);
    const plan = file.content === null ? planUnchanged(file, history) : planWithContent(file, file.content, history);
    if (plan.ref.wasTooLargeToSend) {
      warnings.push(`${file.path} (${plan.ref.sizeBytes} bytes) is larger than 100 KB and was not sent to the model.`);
    }
    return plan;
  });
  return { files: planned, warnings };
}

function planWithContent(file: ActiveFileSubmission, content: string, history: FileHistory): PlannedFile {
  const contentHash = sha256Hex(content);
  if (file.contentHash !== null && normaliseHash(file.contentHash) !== contentHash) {
    throw badInput(`contentHash of ${file.path} does not match its content (expected the SHA-256 of the UTF-8 text)`, {
      field: 'activeFiles.contentHash',
    });
  }
  const sizeBytes = Buffer.byteLength(content, 'utf8');
  if (file.sizeBytes != null && file.sizeBytes !== sizeBytes) {
    throw badInput(`sizeBytes of ${file.path} does not match its content (${sizeBytes} bytes of UTF-8)`, { field: 'activeFiles.sizeBytes' });
  }
  const tooLarge = sizeBytes > MAX_SENDABLE_FILE_BYTES;
  const alreadySent = history.sentInChain.get(file.path) === contentHash;
  const send = !tooLarge && !alreadySent;
  return {
    ref: ref(file, contentHash, sizeBytes, send, tooLarge),
    delivery: send ? 'inline' : 'none',
    content: send ? content : null,
  };
}

function planUnchanged(file: ActiveFileSubmission, history: FileHistory): PlannedFile {
  if (file.contentHash === null) {
    throw badInput(`active file ${file.path} needs its content or, if unchanged, its contentHash`, {
      field: 'activeFiles.content',
    });
  }
  const contentHash = normaliseHash(file.contentHash);
  const sizeBytes = history.knownSizes.get(contentHash) ?? metadataOnlySize(file);
  if (sizeBytes === undefined) {
    throw badInput(`send the content of ${file.path}: this session has no earlier version with that contentHash`, {
      field: 'activeFiles.content',
    });
  }
  const tooLarge = sizeBytes > MAX_SENDABLE_FILE_BYTES;
  const alreadySent = history.sentInChain.get(file.path) === contentHash;
  const send = !tooLarge && !alreadySent;
  return { ref: ref(file, contentHash, sizeBytes, send, tooLarge), delivery: send ? 'stored' : 'none', content: null };
}

/** A file over 100 KB may come as path + contentHash + sizeBytes: it is never sent, so its content is never needed. */
function metadataOnlySize(file: ActiveFileSubmission): number | undefined {
  const size = file.sizeBytes;
  if (size == null) return undefined;
  if (!Number.isSafeInteger(size) || size < 0) throw badInput('sizeBytes must be a whole number of bytes', { field: 'activeFiles.sizeBytes' });
  return size > MAX_SENDABLE_FILE_BYTES ? size : undefined;
}

function normaliseHash(hash: string): string {
  const hex = hash.trim().toLowerCase().replace(/^sha256:/, '');
  if (!SHA256_HEX.test(hex)) throw badInput('contentHash must be a hex SHA-256 digest', { field: 'activeFiles.contentHash' });
  return hex;
}

const ref = (
  file: ActiveFileSubmission,
  contentHash: string,
  sizeBytes: number,
  wasSentToLLM: boolean,
  wasTooLargeToSend: boolean,
): ActiveFileRef => ({ path: file.path, contentHash, sizeBytes, isTouched: file.isTouched, wasSentToLLM, wasTooLargeToSend });

/** Which versions a session's earlier turns recorded, and which the live chain's model already has. */
export function fileHistoryOf(
  sessionTurns: readonly { readonly activeFileRefs: readonly ActiveFileRef[] }[],
  chainTurns: readonly { readonly activeFileRefs: readonly ActiveFileRef[] }[],
): FileHistory {
  return {
    // A later send of another version replaces what the model holds for that path.
    sentInChain: newestFirst(chainTurns, (f) => (f.wasSentToLLM ? [f.path, f.contentHash] : null)),
    knownSizes: newestFirst(sessionTurns, (f) => [f.contentHash, f.sizeBytes]),
  };
}

/**
 * The newest entry per key over the turns' file references (oldest turn first, as history
 * is), indexed from the newest turn back only as far as the keys asked for: a request names
 * a few files, usually sent a turn or two ago, while a long session holds hundreds of turns
 * (HISTORY_WINDOW), and indexing them all on every execute cost more than the rest of its plan.
 */
function newestFirst<V>(
  turns: readonly { readonly activeFileRefs: readonly ActiveFileRef[] }[],
  entryOf: (ref: ActiveFileRef) => readonly [string, V] | null,
): Lookup<string, V> {
  const seen = new Map<string, V>();
  let next = turns.length - 1;
  const get = (key: string): V | undefined => {
    while (!seen.has(key) && next >= 0) {
      const refs = turns[next--]!.activeFileRefs;
      for (let i = refs.length - 1; i >= 0; i--) {
        const entry = entryOf(refs[i]!);
        if (entry && !seen.has(entry[0])) seen.set(entry[0], entry[1]);
      }
    }
    return seen.get(key);
  };
  return { get, has: (key) => get(key) !== undefined };
}
