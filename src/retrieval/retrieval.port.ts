import type { ChunkRef } from '../domain/turn';

/** What the orchestrator asks the vector store for, per instruction (spec 001 sections 3, 4). */
export interface RetrievalRequest {
  readonly orgId: string;
  /** The agent context's vectorCollection. */
  readonly collection: string;
  readonly query: string;
  readonly repo: string | null;
  readonly language: string | null;
  /** Request-only path prefix derived from the workspace scope; never stored in vector payloads. */
  readonly pathPrefix: string | null;
  /** Request-only scope (AgentExecuteInput.retrievalPathPrefixes): a chunk matches when its path is under any of them. */
  readonly pathPrefixes?: readonly string[] | null;
  readonly limit: number;
}

/** A chunk as retrieved: its reference (recorded on the turn) and its text (sent to the LLM). */
export interface RetrievedChunk {
  readonly ref: ChunkRef;
  readonly text: string;
  readonly language: string | null;
}

/**
 * Port: the orchestrator's only view of retrieval. Adapters: Qdrant, the embedded index.
 * Errors: RetrievalError (a DomainError whose message can be shown to users; `kind` says why).
 */
export interface Retriever {
  retrieve(request: RetrievalRequest): Promise<RetrievedChunk[]>;
}
