import type { ContextLookup } from '../../contexts/context-directory.port';
import { isDomainError } from '../../domain/errors';
import { parseSearchCodeArgs } from '../../domain/server-tool-args';
import { summarize } from '../../domain/text';
import type { Retriever } from '../../retrieval/retrieval.port';
import type { TurnStore } from '../../sessions/session-store.port';
import { toolError, toolResult, type ServerTool, type ServerToolContext, type ServerToolOutput } from './server-tool';

/** Characters of one snippet's text the model gets back. */
const MAX_SNIPPET_CHARS = 4_000;

export interface SearchCodeDeps {
  readonly retriever: Retriever;
  readonly contexts: ContextLookup;
  readonly sessions: Pick<TurnStore, 'getSession' | 'recordChunkRefs'>;
  /** Snippets one search returns (RETRIEVAL_TOP_K). */
  readonly limit: number;
}

/**
 * search_code {query, pathPrefix?}: retrieval on demand, in the session's vector collection,
 * repository and language, optionally below one path. The chunks join the turn's chunkRefs,
 * as the turn's own retrieval does (provenance).
 */
export class SearchCodeTool implements ServerTool {
  readonly definition = {
    name: 'search_code',
    description: 'Searches the indexed repository for code relevant to a query; optionally only below a path prefix.',
    parametersJson: JSON.stringify({
      type: 'object',
      properties: {
        query: { type: 'string', description: 'What to look for, in words or code' },
        pathPrefix: { type: 'string', description: 'Only files below this workspace-relative path, e.g. src/ui' },
      },
      required: ['query'],
      additionalProperties: false,
    }),
  };

  constructor(private readonly deps: SearchCodeDeps) {}

  async run(argumentsJson: string, context: ServerToolContext): Promise<ServerToolOutput> {
    const args = parseSearchCodeArgs(argumentsJson);
    if (!args.ok) return toolError(`search_code: ${args.error}`);
    const { caller, sessionId, turnId } = context;
    const session = await this.deps.sessions.getSession(caller, sessionId);
    const [agent] = session ? await this.deps.contexts.agentContextsByIds(caller.orgId, [session.agentContextId]) : [];
    if (!session || !agent) return toolError('search_code: the session has no agent context to search in');
    try {
      const chunks = await this.deps.retriever.retrieve({
        orgId: caller.orgId,
        collection: agent.vectorCollection,
        query: args.value.query,
        repo: session.repo,
        language: session.defaultLanguage,
        pathPrefix: args.value.pathPrefix,
        limit: this.deps.limit,
      });
      if (chunks.length > 0) await this.deps.sessions.recordChunkRefs(caller, sessionId, turnId, chunks.map((c) => c.ref));
      return toolResult({
        results: chunks.map((c) => ({
          path: c.ref.path,
          startLine: c.ref.startLine,
          endLine: c.ref.endLine,
          score: c.ref.score,
          text: summarize(c.text, MAX_SNIPPET_CHARS),
        })),
      });
    } catch (e) {
      // Retrieval's domain errors are phrased for users; anything else stays in the logs.
      if (isDomainError(e)) return toolError(`search_code: repository search is unavailable (${e.message})`);
      throw e;
    }
  }
}
