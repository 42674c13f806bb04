import { badInput } from './errors';
import { requireId } from './ids';

/**
 * Blob keys are scoped org / session / turn, so one org's objects can never be addressed
 * through another's. Turns store gateway URLs (`/blobs/...`) without the org: the blob
 * route takes the org from the caller, and checks the caller may read the session.
 */
const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;
const PLAIN_ORG = /^[A-Za-z0-9_-]{1,64}$/;
const SHA256 = /^[0-9a-f]{64}$/;

/** The names a turn's blobs use. */
export const TURN_BLOBS = {
  instruction: 'instruction.md',
  answer: 'answer.md',
  request: 'openai-request.json',
  response: 'openai-response.json',
} as const;

export type TurnBlobName = (typeof TURN_BLOBS)[keyof typeof TURN_BLOBS];

/** Org ids are free text in tokens; anything beyond [A-Za-z0-9_-] is hex-encoded behind "~". */
const orgSegment = (orgId: string): string => (PLAIN_ORG.test(orgId) ? orgId : `~${Buffer.from(orgId, 'utf8').toString('hex')}`);

const sessionPrefix = (orgId: string, sessionId: string) => `orgs/${orgSegment(orgId)}/sessions/${sessionId}`;

export const turnBlobKey = (orgId: string, sessionId: string, turnId: string, name: TurnBlobName): string =>
  `${sessionPrefix(orgId, sessionId)}/turns/${turnId}/${name}`;

export const turnBlobUrl = (sessionId: string, turnId: string, name: TurnBlobName): string =>
  `/blobs/sessions/${sessionId}/turns/${turnId}/${name}`;

/** A file a server tool wrote during a turn (write_file), content-addressed under the turn. */
export const turnFileBlobKey = (orgId: string, sessionId: string, turnId: string, contentHash: string): string =>
  `${sessionPrefix(orgId, sessionId)}/turns/${turnId}/files/${contentHash}`;

export const turnFileBlobUrl = (sessionId: string, turnId: string, contentHash: string): string =>
  `/blobs/sessions/${sessionId}/turns/${turnId}/files/${contentHash}`;

/** Active-file versions, content-addressed per session (a new chain re-sends them from here). */
export const fileBlobKey = (orgId: string, sessionId: string, contentHash: string): string =>
  `${sessionPrefix(orgId, sessionId)}/files/${contentHash}`;

/** A `/blobs/...` path as the blob route receives it, resolved for the caller's org; null if malformed. */
export function resolveBlobPath(orgId: string, path: string): { sessionId: string; key: string } | null {
  const parts = path.replace(/^\/+/, '').split('/');
  if (parts.length < 4 || parts[0] !== 'sessions' || !parts.every((p) => SEGMENT.test(p))) return null;
  const [, sessionId, kind, ...rest] = parts as [string, string, string, ...string[]];
  if (kind === 'turns' && rest.length === 2 && (Object.values(TURN_BLOBS) as string[]).includes(rest[1] as string)) {
    return { sessionId, key: turnBlobKey(orgId, sessionId, rest[0] as string, rest[1] as TurnBlobName) };
  }
  if (kind === 'turns' && rest.length === 3 && rest[1] === 'files' && SHA256.test(rest[2] as string)) {
    return { sessionId, key: turnFileBlobKey(orgId, sessionId, rest[0] as string, rest[2] as string) };
  }
  if (kind === 'files' && rest.length === 1 && SHA256.test(rest[0] as string)) {
    return { sessionId, key: fileBlobKey(orgId, sessionId, rest[0] as string) };
  }
  return null;
}

/**
 * The ids of a `/blobs/...` path as the route receives it (percent-encoded): a segment that
 * is not percent-encoded UTF-8 (an encoded lone surrogate is not), or a session or turn id
 * that breaks the id rule, is BAD_USER_INPUT. Whatever else names no blob is resolveBlobPath's
 * null (404).
 */
export function assertBlobPathIds(path: string): void {
  const parts = path.replace(/^\/+/, '').split('/');
  parts.forEach((raw, i) => {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      throw badInput('a blob URL segment is not percent-encoded UTF-8', { field: 'path' });
    }
    if (parts[0] !== 'sessions') return;
    if (i === 1) requireId('sessionId', segment);
    if (i === 3 && parts[2] === 'turns') requireId('turnId', segment);
  });
}
