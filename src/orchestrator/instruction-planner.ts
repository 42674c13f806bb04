import { randomUUID } from 'node:crypto';
import type { BlobStore } from '../blobs/blob-store.port';
import type { ContextLookup } from '../contexts/context-directory.port';
import { TURN_BLOBS } from '../domain/blob-keys';
import { fileHistoryOf, planActiveFiles, type ActiveFilesPlan } from '../domain/active-files';
import { chainExpiryOf, decideChain } from '../domain/chain';
import { chunksOfChain, newSnippets } from '../domain/chunk-delta';
import type { AgentContextRecord, ConversationContextRecord } from '../domain/contexts';
import { badInput, DomainError, isDomainError, notFound } from '../domain/errors';
import type { NewSession, SessionRecord } from '../domain/session';
import type { TurnRecord } from '../domain/turn';
import type { LanguageModel, LlmRequest } from '../llm/llm.port';
import type { Logger } from '../logger.port';
import type { RetrievedChunk, Retriever } from '../retrieval/retrieval.port';
import type { TurnStore } from '../sessions/session-store.port';
import { llmRequestOf, preloadMessages, userMessage, type FileToSend, type HistoryExchange } from './packaging';
import type { InstructionRequest } from './request';
import type { PipelineSettings } from './settings';
import { SessionFiles, TurnBlobs } from './turn-blobs';

/** How many recent turns the chain and file rules look at. */
const HISTORY_WINDOW = 200;
/** Preloading a new chain: at most this many earlier exchanges and characters. */
const PRELOAD_MAX_TURNS = 20;
const PRELOAD_MAX_CHARS = 200_000;

export interface PlannerDeps {
  readonly sessions: Pick<TurnStore, 'getSession' | 'recentTurns'>;
  readonly contexts: ContextLookup;
  readonly retriever: Retriever;
  readonly blobs: BlobStore;
  readonly llm: LanguageModel;
  readonly config: PipelineSettings;
  /** Snippets one retrieval asks for (RETRIEVAL_TOP_K). */
  readonly retrievalLimit: number;
  readonly logger: Logger;
  readonly now: () => Date;
}

/** Everything decided before anything is written: the session, the new turn's fields and the provider call. */
export interface PlannedInstruction {
  /** The session the turn joins: the request's own, or a new one the orchestrator creates (with this id). */
  readonly sessionId: string;
  readonly newSession: NewSession | null;
  readonly mode: string;
  readonly model: string;
  /** The provider conversation this turn joins; null when it starts one (the turn's own id). */
  readonly conversationId: string | null;
  readonly previousResponseId: string | null;
  readonly files: ActiveFilesPlan;
  /** Submitted file versions the session has not stored yet (a later new chain may need them). */
  readonly newFileVersions: readonly { readonly contentHash: string; readonly content: string }[];
  readonly snippets: readonly RetrievedChunk[];
  readonly chunkRefs: readonly RetrievedChunk['ref'][];
  readonly warnings: readonly string[];
  readonly request: LlmRequest;
  readonly chainExpiry: (receivedAt: Date) => Date;
}

interface Contexts {
  readonly agent: AgentContextRecord;
  readonly conversation: ConversationContextRecord | null;
}

interface SessionState {
  readonly session: SessionRecord;
  readonly history: readonly TurnRecord[];
}

/** Where the turn's blobs go: the caller's org, the session's id (chosen before a new session exists). */
interface BlobScope {
  readonly orgId: string;
  readonly sessionId: string;
}

/**
 * The orchestrator's steps before a turn exists (DD-001 / spec 001): resolve contexts and
 * session, decide the provider chain, analyse active files, retrieve, and package the call.
 * It decides and reads; it writes nothing. Everything that can refuse the request refuses
 * here, before the orchestrator stores anything.
 */
export class InstructionPlanner {
  constructor(private readonly deps: PlannerDeps) {}

  async plan(req: InstructionRequest): Promise<PlannedInstruction> {
    const contexts = await this.resolveContexts(req);
    const existing = req.sessionId ? await this.loadSession(req, contexts) : null;
    const history = existing?.history ?? [];
    const chain = decideChain(history, this.deps.now());
    const links = chain.kind === 'continue' ? chain.links : [];
    const fileHistory = fileHistoryOf(history, links);
    const files = planActiveFiles(req.activeFiles, fileHistory);
    const { retrieved, warning: retrievalWarning } = await this.retrieve(req, contexts, existing?.session ?? null);
    const scope: BlobScope = { orgId: req.caller.orgId, sessionId: existing?.session.id ?? randomUUID() };
    const snippets = newSnippets(retrieved, chunksOfChain(links));
    const preload = chain.kind === 'new' ? await this.preload(scope, history) : { exchanges: [], warning: null };
    const filesToSend = await this.contentsToSend(scope, files);
    const requested = contexts.conversation?.model || contexts.agent.defaultModel || this.deps.config.defaultModel;
    const warnings = [chain.kind === 'new' ? chain.warning : null, ...files.warnings, retrievalWarning, preload.warning];
    return {
      sessionId: scope.sessionId,
      newSession: existing ? null : newSessionOf(req, contexts, scope.sessionId),
      mode: req.mode,
      model: this.deps.llm.modelFor(requested),
      conversationId: chain.kind === 'continue' ? (chain.conversationId ?? chain.links[0]?.id ?? null) : null,
      previousResponseId: chain.kind === 'continue' ? chain.previousResponseId : null,
      files,
      newFileVersions: files.files.flatMap((f) =>
        f.delivery === 'inline' && f.content !== null && !fileHistory.knownSizes.has(f.ref.contentHash)
          ? [{ contentHash: f.ref.contentHash, content: f.content }]
          : [],
      ),
      snippets,
      chunkRefs: retrieved.map((c) => c.ref),
      warnings: warnings.filter((w): w is string => w !== null),
      request: llmRequestOf(contexts.conversation, {
        model: requested,
        previousResponseId: chain.kind === 'continue' ? chain.previousResponseId : null,
        input: [
          ...preloadMessages(preload.exchanges),
          userMessage({
            instruction: req.instruction,
            mode: req.mode,
            filesToSend,
            filesNotSent: files.files.filter((f) => f.delivery === 'none').map((f) => f.ref),
            snippets,
          }),
        ],
      }),
      chainExpiry: (receivedAt) => chainExpiryOf(chain, receivedAt, this.deps.config.chainTtlSeconds),
    };
  }

  private async resolveContexts(req: InstructionRequest): Promise<Contexts> {
    const { contexts } = this.deps;
    const [agent] = await contexts.agentContextsByIds(req.caller.orgId, [req.agentContextId]);
    if (!agent) throw notFound('agent context');
    if (!req.conversationContextId) return { agent, conversation: null };
    const [conversation] = await contexts.conversationContextsByIds(req.caller.orgId, [req.conversationContextId]);
    if (!conversation) throw notFound('conversation context');
    return { agent, conversation };
  }

  private async loadSession(req: InstructionRequest, contexts: Contexts): Promise<SessionState> {
    const session = await this.deps.sessions.getSession(req.caller, req.sessionId as string);
    if (!session) throw notFound('session');
    if (session.agentContextId !== contexts.agent.id) {
      throw badInput(`the session runs in agent context ${session.agentContextId}`, { field: 'agentContextId' });
    }
    if ((session.conversationContextId ?? null) !== (contexts.conversation?.id ?? null)) {
      throw badInput(`the session runs in conversation context ${session.conversationContextId ?? '(none)'}`, {
        field: 'conversationContextId',
      });
    }
    if (session.lastTurnStatus === 'PENDING') {
      throw new DomainError('SESSION_BUSY', 'the session is still working on its last turn', { sessionId: session.id });
    }
    return { session, history: await this.deps.sessions.recentTurns(req.caller, session, HISTORY_WINDOW) };
  }

  /** Spec 001 section 3.2: retrieval runs on every turn; a failing vector store costs snippets, not the turn. */
  private async retrieve(
    req: InstructionRequest,
    contexts: Contexts,
    session: SessionRecord | null,
  ): Promise<{ retrieved: RetrievedChunk[]; warning: string | null }> {
    try {
      const retrieved = await this.deps.retriever.retrieve({
        orgId: req.caller.orgId,
        collection: contexts.agent.vectorCollection,
        query: req.instruction,
        repo: req.repo ?? session?.repo ?? null,
        language: req.language ?? session?.defaultLanguage ?? null,
        pathPrefix: null,
        limit: this.deps.retrievalLimit,
      });
      return { retrieved, warning: null };
    } catch (e) {
      // A domain error's message is meant for users (retrieval logs what it hides where it happens).
      if (isDomainError(e)) {
        return { retrieved: [], warning: `Repository search was unavailable (${e.message}), so this answer uses no retrieved snippets.` };
      }
      this.deps.logger.warn({ err: e, collection: contexts.agent.vectorCollection }, 'retrieval failed; continuing without snippets');
      return { retrieved: [], warning: 'Repository search was unavailable, so this answer uses no retrieved snippets.' };
    }
  }

  /** Spec 001 section 11.3: a new chain carries the earlier exchanges from our own storage. */
  private async preload(scope: BlobScope, history: readonly TurnRecord[]): Promise<{ exchanges: HistoryExchange[]; warning: string | null }> {
    const completed = history.filter((t) => t.status === 'COMPLETED');
    const recent = completed.slice(-PRELOAD_MAX_TURNS);
    const texts = await Promise.all(recent.map((t) => this.exchangeOf(scope, t)));
    const kept: HistoryExchange[] = [];
    let budget = PRELOAD_MAX_CHARS;
    for (const exchange of texts.reverse()) {
      const size = exchange.instruction.length + exchange.answer.length;
      if (size > budget) break;
      budget -= size;
      kept.unshift(exchange);
    }
    const left = completed.length - kept.length;
    const warning = left > 0 ? `${left} earlier exchange(s) did not fit into the preloaded history.` : null;
    return { exchanges: kept, warning };
  }

  private async exchangeOf(scope: BlobScope, turn: TurnRecord): Promise<HistoryExchange> {
    const blobs = new TurnBlobs(this.deps.blobs, scope.orgId, scope.sessionId, turn.id);
    const [instruction, answer] = await Promise.all([blobs.getText(TURN_BLOBS.instruction), blobs.getText(TURN_BLOBS.answer)]);
    return { instruction: instruction ?? turn.instructionSummary, answer: answer ?? turn.agentAnswerSummary ?? '' };
  }

  /** Inline files carry their content; files a new chain must re-send come from the session's store. */
  private async contentsToSend(scope: BlobScope, plan: ActiveFilesPlan): Promise<FileToSend[]> {
    const store = new SessionFiles(this.deps.blobs, scope.orgId, scope.sessionId);
    return Promise.all(
      plan.files
        .filter((f) => f.delivery !== 'none')
        .map(async (f) => {
          const content = f.delivery === 'inline' ? f.content : await store.get(f.ref.contentHash);
          if (content === null) {
            throw badInput(`the gateway no longer has ${f.ref.path} at that contentHash; send its content`, {
              field: 'activeFiles.content',
            });
          }
          return { ref: f.ref, content };
        }),
    );
  }
}

/** A new session named by the request, or by the instruction's first line. */
function newSessionOf(req: InstructionRequest, contexts: Contexts, id: string): NewSession {
  const firstLine = req.instruction.trim().split('\n')[0]?.trim() ?? '';
  return {
    id,
    name: req.sessionName?.trim() || (firstLine.length > 80 ? `${firstLine.slice(0, 79)}…` : firstLine) || 'Untitled session',
    agentContextId: contexts.agent.id,
    conversationContextId: contexts.conversation?.id ?? null,
    workspaceId: req.workspaceId,
    repo: req.repo,
    defaultLanguage: req.language,
  };
}
