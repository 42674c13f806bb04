import type { BlobStore } from '../blobs/blob-store.port';
import { TURN_BLOBS } from '../domain/blob-keys';
import type { TurnRecord } from '../domain/turn';
import type { LlmMessage } from '../llm/llm.port';
import { fenced, type FileToSend, type HistoryExchange } from './packaging';
import { SessionFiles, TurnBlobs } from './turn-blobs';

/** The newest exchanges a new chain carries in full; older ones come as their stored summaries. */
export const PRELOAD_FULL_EXCHANGES = 4;
/** Characters of earlier exchanges (full or summarised) a new chain carries at most. */
export const PRELOAD_MAX_CHARS = 200_000;
/** Characters of earlier active files a new chain carries at most. */
export const PRELOAD_MAX_FILE_CHARS = 400_000;

/** Where the session's blobs are. */
export interface BlobScope {
  readonly orgId: string;
  readonly sessionId: string;
}

/** One earlier exchange, as the preload carries it. */
export interface PreloadedExchange extends HistoryExchange {
  readonly summarised: boolean;
}

export interface ChainPreload {
  readonly messages: readonly LlmMessage[];
  /** Active files of earlier turns that this request does not list: their latest versions. */
  readonly files: readonly FileToSend[];
  readonly warning: string | null;
}

export const NO_PRELOAD: ChainPreload = { messages: [], files: [], warning: null };

/**
 * Spec 001 section 11.3 and issue 10: a new chain is preloaded from the gateway's own
 * storage: the newest completed exchanges in full, older ones as their stored summaries
 * (instruction and answer, 1,024 characters each) within a budget, and the latest version
 * of every active file the session recorded that this request does not carry itself.
 */
export async function preloadChain(
  blobStore: BlobStore,
  scope: BlobScope,
  history: readonly TurnRecord[],
  requestPaths: ReadonlySet<string>,
): Promise<ChainPreload> {
  const completed = history.filter((t) => t.status === 'COMPLETED');
  const newestFirst = [...completed].reverse();
  const full = await Promise.all(newestFirst.slice(0, PRELOAD_FULL_EXCHANGES).map((t) => fullExchangeOf(blobStore, scope, t)));
  const candidates = newestFirst.map((t, i) => ({ full: full[i] ?? null, summary: summaryOf(t) }));
  const exchanges = selectExchanges(candidates, PRELOAD_MAX_CHARS);
  const files = await latestFiles(blobStore, scope, history, requestPaths);
  const left = completed.length - exchanges.length;
  const warnings = [
    left > 0 ? `${left} earlier exchange(s) did not fit into the preloaded history.` : null,
    files.left > 0 ? `${files.left} earlier active file(s) did not fit into the preloaded history.` : null,
  ].filter((w): w is string => w !== null);
  return { messages: exchanges.flatMap(messagesOf), files: files.sent, warning: warnings.length > 0 ? warnings.join(' ') : null };
}

/**
 * Newest first: each exchange in full while it is among the newest and fits, else its
 * summary while that fits; the first that fits in neither form ends the history. Returned
 * oldest first.
 */
export function selectExchanges(
  newestFirst: readonly { readonly full: HistoryExchange | null; readonly summary: HistoryExchange }[],
  maxChars: number,
): PreloadedExchange[] {
  const kept: PreloadedExchange[] = [];
  let budget = maxChars;
  for (const candidate of newestFirst) {
    const full = candidate.full;
    if (full && sizeOf(full) <= budget) {
      budget -= sizeOf(full);
      kept.unshift({ ...full, summarised: false });
    } else if (sizeOf(candidate.summary) <= budget) {
      budget -= sizeOf(candidate.summary);
      kept.unshift({ ...candidate.summary, summarised: true });
    } else {
      break;
    }
  }
  return kept;
}

const sizeOf = (e: HistoryExchange): number => e.instruction.length + e.answer.length;

const summaryOf = (t: TurnRecord): HistoryExchange => ({ instruction: t.instructionSummary, answer: t.agentAnswerSummary ?? '' });

async function fullExchangeOf(blobStore: BlobStore, scope: BlobScope, turn: TurnRecord): Promise<HistoryExchange> {
  const blobs = new TurnBlobs(blobStore, scope.orgId, scope.sessionId, turn.id);
  const [instruction, answer] = await Promise.all([
    blobs.getTextAt(turn.fullInstructionUrl, TURN_BLOBS.instruction),
    blobs.getTextAt(turn.fullAgentAnswerUrl, TURN_BLOBS.answer),
  ]);
  return { instruction: instruction ?? turn.instructionSummary, answer: answer ?? turn.agentAnswerSummary ?? '' };
}

function messagesOf(e: PreloadedExchange): LlmMessage[] {
  if (!e.summarised) {
    return [
      { type: 'message', role: 'user', text: e.instruction },
      { type: 'message', role: 'assistant', text: e.answer },
    ];
  }
  return [
    { type: 'message', role: 'user', text: `(Summary of an earlier instruction of this session)\n\n${e.instruction}` },
    { type: 'message', role: 'assistant', text: `(Summary of my answer to it)\n\n${e.answer}` },
  ];
}

/** The newest recorded version of each path the request does not list, from the session's file store. */
async function latestFiles(
  blobStore: BlobStore,
  scope: BlobScope,
  history: readonly TurnRecord[],
  requestPaths: ReadonlySet<string>,
): Promise<{ sent: FileToSend[]; left: number }> {
  const latest = new Map<string, TurnRecord['activeFileRefs'][number]>();
  for (const turn of history) for (const ref of turn.activeFileRefs) latest.set(ref.path, ref);
  const wanted = [...latest.values()].filter((ref) => !requestPaths.has(ref.path) && !ref.wasTooLargeToSend);
  const store = new SessionFiles(blobStore, scope.orgId, scope.sessionId);
  const contents = await Promise.all(wanted.map((ref) => store.get(ref.contentHash)));
  const sent: FileToSend[] = [];
  let budget = PRELOAD_MAX_FILE_CHARS;
  let left = 0;
  wanted.forEach((ref, i) => {
    const content = contents[i];
    // A version the store no longer has cannot be sent; the model still gets the history.
    if (content == null) return;
    if (content.length > budget) {
      left++;
      return;
    }
    budget -= content.length;
    sent.push({ ref: { ...ref, wasSentToLLM: true }, content });
  });
  return { sent, left };
}

/**
 * Issue 10 item 7: after a CANCELLED turn the model hears that its previous answer was cut
 * off, with that turn's instruction and the partial text (the chain continues from the
 * last completed response, so it has neither).
 */
export async function interruptedTurnMessage(blobStore: BlobStore, scope: BlobScope, history: readonly TurnRecord[]): Promise<LlmMessage | null> {
  const last = history[history.length - 1];
  if (!last || last.status !== 'CANCELLED') return null;
  const blobs = new TurnBlobs(blobStore, scope.orgId, scope.sessionId, last.id);
  const [instruction, answer] = await Promise.all([
    blobs.getTextAt(last.fullInstructionUrl, TURN_BLOBS.instruction),
    blobs.getTextAt(last.fullAgentAnswerUrl, TURN_BLOBS.answer),
  ]);
  const partial = answer ?? last.agentAnswerSummary ?? '';
  const text = [
    'Your previous answer in this session was interrupted: the developer cancelled it before it was finished.',
    `The instruction it answered:\n\n${fenced(instruction ?? last.instructionSummary)}`,
    partial.length > 0 ? `The partial answer you had given before the interruption:\n\n${fenced(partial)}` : 'You had not written any of the answer yet.',
  ].join('\n\n');
  return { type: 'message', role: 'user', text };
}
