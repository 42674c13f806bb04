import { randomUUID } from 'node:crypto';
import type { BlobStore } from '../blobs/blob-store.port';
import type { ContextLookup } from '../contexts/context-directory.port';
import { fileHistoryOf, planActiveFiles, type ActiveFilesPlan, type FileHistory } from '../domain/active-files';
import { chainExpiryOf, decideChain, type ChainDecision, type ChainTurn } from '../domain/chain';
import { restartWarning, type ChainRestartReason } from '../domain/chain-restart';
import { chunksOfChain, newSnippets } from '../domain/chunk-delta';
import type { AgentContextRecord, ConversationContextRecord } from '../domain/contexts';
import { badInput, DomainError, isDomainError, notFound } from '../domain/errors';
import { checkFollowsTurn } from '../domain/follow-on';
import { resolveLocalEdits } from '../domain/local-edits';
import type { SkippedSnippet, TurnRequestMetadata } from '../domain/request-metadata';
import type { NewSession, SessionRecord } from '../domain/session';
import type { ActiveFileRef, TurnRecord } from '../domain/turn';
import type { LanguageModel, LlmMessage, LlmRequest } from '../llm/llm.port';
import type { Logger } from '../logger.port';
import type { RetrievedChunk, Retriever } from '../retrieval/retrieval.port';
import type { ChainHistoryReader, TurnStore } from '../sessions/session-store.port';
import { interruptedTurnMessage, NO_PRELOAD, preloadChain, type BlobScope } from './chain-preload';
import { llmRequestOf, userMessage, type FileToSend } from './packaging';
import type { InstructionRequest } from './request';
import type { PipelineSettings } from './settings';
import { SessionFiles } from './turn-blobs';

/** How many recent turns the chain and file rules look at (a restarted tool continuation too). */
export const HISTORY_WINDOW = 200;

export interface PlannerDeps {
  readonly sessions: Pick<TurnStore, 'getSession' | 'recentTurns'>;
  /** The slim recent turns every plan decides on; whole turns come from `sessions` when a new chain is preloaded. */
  readonly history: ChainHistoryReader;
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
  /** The existing session as read for this plan (null: a new one), for the turn write to check it is still so. */
  readonly session: SessionRecord | null;
  readonly newSession: NewSession | null;
  readonly mode: string;
  readonly model: string;
  /** The provider conversation this turn joins; null when it starts one (the turn's own id). */
  readonly conversationId: string | null;
  readonly previousResponseId: string | null;
  readonly openAIChainRestartReason: ChainRestartReason | null;
  readonly files: ActiveFilesPlan;
  /** What the turn records as its active files: the request's, and on a new chain the earlier ones preloaded. */
  readonly activeFileRefs: readonly ActiveFileRef[];
  readonly requestMetadata: TurnRequestMetadata;
  /** Submitted file versions the session has not stored yet (a later new chain may need them). */
  readonly newFileVersions: readonly { readonly contentHash: string; readonly content: string }[];
  readonly snippets: readonly RetrievedChunk[];
  readonly chunkRefs: readonly RetrievedChunk['ref'][];
  readonly warnings: readonly string[];
  readonly request: LlmRequest;
  readonly chainExpiry: (receivedAt: Date) => Date;
  /** Issue 10: the same turn on a new chain preloaded from history, should the provider have lost this one; null on a new chain. */
  readonly restartChain: (() => Promise<PlannedChainRestart>) | null;
}

/** The retry of a turn whose chain the provider lost. */
export interface PlannedChainRestart {
  readonly request: LlmRequest;
  readonly activeFileRefs: readonly ActiveFileRef[];
  readonly chunkRefs: readonly RetrievedChunk['ref'][];
  readonly requestMetadata: TurnRequestMetadata;
  readonly warnings: readonly string[];
  readonly chainExpiry: (receivedAt: Date) => Date;
}

/** One way of packaging the turn, for one chain decision. */
interface PackagedTurn {
  readonly fileHistory: FileHistory;
  readonly files: ActiveFilesPlan;
  readonly activeFileRefs: readonly ActiveFileRef[];
  readonly snippets: readonly RetrievedChunk[];
  readonly chunkRefs: readonly RetrievedChunk['ref'][];
  readonly skipped: readonly SkippedSnippet[];
  readonly warnings: readonly (string | null)[];
  readonly request: LlmRequest;
}

/** What every packaging of the turn shares, whichever chain it joins. */
interface TurnInputs {
  readonly req: InstructionRequest;
  readonly contexts: Contexts;
  readonly scope: BlobScope;
  readonly history: readonly ChainTurn[];
  /** The same turns whole, read only when a new chain is preloaded from them. */
  readonly fullHistory: () => Promise<readonly TurnRecord[]>;
  readonly retrieved: readonly RetrievedChunk[];
  readonly requestedModel: string;
  readonly interrupted: LlmMessage | null;
}

interface Contexts {
  readonly agent: AgentContextRecord;
  readonly conversation: ConversationContextRecord | null;
}

interface SessionState {
  readonly session: SessionRecord;
  readonly history: readonly ChainTurn[];
}

/** The session as read, before the checks: null when the caller cannot see it. */
interface UncheckedSession {
  readonly session: SessionRecord | null;
  readonly history: readonly ChainTurn[];
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
    // The contexts, the session and its history are read at once: with nothing between them,
    // the store can send them together (on MySQL one round trip, see Database.read).
    const [contexts, loaded] = await Promise.all([
      this.resolveContexts(req),
      req.sessionId ? this.readSession(req, req.sessionId) : null,
    ]);
    const existing = loaded ? this.checkSession(loaded, contexts) : null;
    const history = existing?.history ?? [];
    if (req.followsTurnId) checkFollowsTurn(history, existing?.session.id ?? '', req.followsTurnId);
    const chain = decideChain(history, this.deps.now());
    const { retrieved, warning: retrievalWarning } = await this.retrieve(req, contexts, existing?.session ?? null);
    // Where the turn's blobs go: the caller's org, the session's id (chosen before a new session exists).
    const scope: BlobScope = { orgId: req.caller.orgId, sessionId: existing?.session.id ?? randomUUID() };
    const requestedModel = contexts.conversation?.model || contexts.agent.defaultModel || this.deps.config.defaultModel;
    const fullHistory = existing ? once(() => this.wholeTurns(req, existing.session)) : async () => [];
    // After a cancelled turn the model hears what was cut off: that turn's texts, read whole.
    const interrupted =
      history[history.length - 1]?.status === 'CANCELLED' ? await interruptedTurnMessage(this.deps.blobs, scope, await fullHistory()) : null;
    const inputs: TurnInputs = { req, contexts, scope, history, fullHistory, retrieved, requestedModel, interrupted };
    const turn = await this.packageTurn(inputs, chain);
    const ttl = this.deps.config.chainTtlSeconds;
    return {
      sessionId: scope.sessionId,
      session: existing?.session ?? null,
      newSession: existing ? null : newSessionOf(req, contexts, scope.sessionId),
      mode: req.mode,
      model: this.deps.llm.modelFor(requestedModel),
      conversationId: chain.kind === 'continue' ? (chain.conversationId ?? chain.links[0]?.id ?? null) : null,
      previousResponseId: chain.kind === 'continue' ? chain.previousResponseId : null,
      openAIChainRestartReason: chain.kind === 'new' ? chain.reason : null,
      files: turn.files,
      activeFileRefs: turn.activeFileRefs,
      requestMetadata: { retrievalPathPrefixes: req.retrievalPathPrefixes, skippedSnippets: turn.skipped },
      newFileVersions: turn.files.files.flatMap((f) =>
        f.delivery === 'inline' && f.content !== null && !turn.fileHistory.knownSizes.has(f.ref.contentHash)
          ? [{ contentHash: f.ref.contentHash, content: f.content }]
          : [],
      ),
      snippets: turn.snippets,
      chunkRefs: turn.chunkRefs,
      warnings: [retrievalWarning, ...turn.warnings].filter((w): w is string => w !== null),
      request: turn.request,
      chainExpiry: (receivedAt) => chainExpiryOf(chain, receivedAt, ttl),
      restartChain: chain.kind === 'continue' ? () => this.restartOnNewChain(inputs) : null,
    };
  }

  /** Issue 10: the provider lost the chain; the same inputs, packaged for a new chain preloaded from history. */
  private async restartOnNewChain(inputs: TurnInputs): Promise<PlannedChainRestart> {
    const decision: ChainDecision = { kind: 'new', reason: 'LOST_BY_PROVIDER', warning: restartWarning('LOST_BY_PROVIDER') };
    const turn = await this.packageTurn(inputs, decision);
    return {
      request: turn.request,
      activeFileRefs: turn.activeFileRefs,
      chunkRefs: turn.chunkRefs,
      requestMetadata: { retrievalPathPrefixes: inputs.req.retrievalPathPrefixes, skippedSnippets: turn.skipped },
      warnings: turn.warnings.filter((w): w is string => w !== null),
      chainExpiry: (receivedAt) => chainExpiryOf(decision, receivedAt, this.deps.config.chainTtlSeconds),
    };
  }

  /**
   * The turn for one chain decision: which files and snippets the model needs (a live chain
   * holds some already; a new one is preloaded from history), local edits winning over the
   * index, and the provider call.
   */
  private async packageTurn(inputs: TurnInputs, chain: ChainDecision): Promise<PackagedTurn> {
    const { req, contexts, scope, history, retrieved } = inputs;
    const links = chain.kind === 'continue' ? chain.links : [];
    const fileHistory = fileHistoryOf(history, links);
    const files = planActiveFiles(req.activeFiles, fileHistory);
    const preload =
      chain.kind === 'new' && history.length > 0
        ? await preloadChain(this.deps.blobs, scope, await inputs.fullHistory(), new Set(files.files.map((f) => f.ref.path)))
        : NO_PRELOAD;
    const filesToSend = [...(await this.contentsToSend(scope, files)), ...preload.files];
    const held = new Set([
      ...filesToSend.map((f) => f.ref.path),
      ...files.files.filter((f) => f.delivery === 'none' && !f.ref.wasTooLargeToSend).map((f) => f.ref.path),
    ]);
    const { send: kept, skipped } = resolveLocalEdits(retrieved, held);
    const snippets = newSnippets(kept, chunksOfChain(links));
    return {
      fileHistory,
      files,
      activeFileRefs: [...files.files.map((f) => f.ref), ...preload.files.map((f) => f.ref)],
      snippets,
      chunkRefs: kept.map((c) => c.ref),
      skipped,
      warnings: [chain.kind === 'new' ? chain.warning : null, ...files.warnings, preload.warning],
      request: llmRequestOf(contexts.conversation, {
        model: inputs.requestedModel,
        previousResponseId: chain.kind === 'continue' ? chain.previousResponseId : null,
        input: [
          ...preload.messages,
          ...(inputs.interrupted ? [inputs.interrupted] : []),
          userMessage({
            instruction: req.instruction,
            mode: req.mode,
            filesToSend,
            filesNotSent: files.files.filter((f) => f.delivery === 'none').map((f) => f.ref),
            snippets,
            skippedSnippets: skipped,
          }),
        ],
      }),
    };
  }

  private async resolveContexts(req: InstructionRequest): Promise<Contexts> {
    const { contexts } = this.deps;
    const [[agent], conversations] = await Promise.all([
      contexts.agentContextsByIds(req.caller.orgId, [req.agentContextId]),
      req.conversationContextId ? contexts.conversationContextsByIds(req.caller.orgId, [req.conversationContextId]) : null,
    ]);
    if (!agent) throw notFound('agent context');
    if (!conversations) return { agent, conversation: null };
    const [conversation] = conversations;
    if (!conversation) throw notFound('conversation context');
    return { agent, conversation };
  }

  /** The session and its recent turns, side by side: the history read needs nothing from the session row. */
  private async readSession(req: InstructionRequest, sessionId: string): Promise<UncheckedSession> {
    const [session, history] = await Promise.all([
      this.deps.sessions.getSession(req.caller, sessionId),
      this.deps.history.chainTurns(req.caller, sessionId, HISTORY_WINDOW),
    ]);
    return { session, history };
  }

  /**
   * The session must be visible and belong to the request's contexts; its history is what the
   * session row counts (a turn added in between is not part of the plan). The turns were read
   * for the caller's org only, and are dropped with the session if the caller may not see it.
   */
  private checkSession({ session, history }: UncheckedSession, contexts: Contexts): SessionState {
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
    // Copied only when a turn was added since the session row was read (rare).
    const counted = (history.at(-1)?.sequenceNumber ?? 0) <= session.turnCount;
    return { session, history: counted ? history : history.filter((t) => t.sequenceNumber <= session.turnCount) };
  }

  /** The turns of the planned history, whole (a turn added since is not part of it). */
  private async wholeTurns(req: InstructionRequest, session: SessionRecord): Promise<TurnRecord[]> {
    const turns = await this.deps.sessions.recentTurns(req.caller, session, HISTORY_WINDOW);
    return turns.filter((t) => t.sequenceNumber <= session.turnCount);
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
        pathPrefixes: req.retrievalPathPrefixes,
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

/** Runs `load` on the first call only; later calls share its promise. */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | null = null;
  return () => (loaded ??= load());
}
