import type { Caller } from '../domain/caller';
import type { AgentContextDraft, AgentContextRecord, ConversationContextDraft, ConversationContextRecord } from '../domain/contexts';

/**
 * Port: the agent and conversation contexts of an org, by id (the orchestrator resolves a
 * request's contexts; the DataLoaders resolve names). Adapter: the context tables
 * (context-directory.ts). Ids of another org, or unknown ones, are simply not returned.
 * Errors: StoreUnavailableError (an UnavailableError of the 'session store').
 */
export interface ContextLookup {
  agentContextsByIds(orgId: string, ids: readonly string[]): Promise<AgentContextRecord[]>;
  conversationContextsByIds(orgId: string, ids: readonly string[]): Promise<ConversationContextRecord[]>;
}

/** What resolvers get: the lookup, the lists, and the admin-only upserts (FORBIDDEN for anyone else). */
export interface ContextCatalog extends ContextLookup {
  listAgentContexts(orgId: string): Promise<AgentContextRecord[]>;
  listConversationContexts(orgId: string): Promise<ConversationContextRecord[]>;
  /** With an id it updates that context of the caller's org (NOT_FOUND otherwise); without, it creates one. */
  upsertAgentContext(caller: Caller, draft: AgentContextDraft): Promise<AgentContextRecord>;
  upsertConversationContext(caller: Caller, draft: ConversationContextDraft): Promise<ConversationContextRecord>;
}
