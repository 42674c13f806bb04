import type { AgentContextRecord, ConversationContextRecord } from '../domain/contexts';
import type { ContextLookup } from './context-directory.port';

/**
 * How long an execute may use a context as this instance last read it. Changes made on this
 * instance are seen at once (`changed`); a context changed on another instance sharing the
 * database is seen here within this long (docs/ARCHITECTURE.md, "Turn flow").
 */
export const CONTEXT_CACHE_TTL_MS = 5_000;
/** Orgs remembered at most; past it the memory starts over. */
const MAX_ORGS = 10_000;

interface Kept<T> {
  readonly record: T;
  readonly until: number;
}

/**
 * The contexts executes resolve, kept per org for a short while: every execute reads its agent
 * context (a new session's only read), and contexts are configuration that rarely changes.
 * Only found contexts are kept (ids are made at creation, so a missing one stays missing until
 * its org creates it here or elsewhere, which the next read sees).
 */
export class ContextCache implements ContextLookup {
  /** By org, then by id. */
  private readonly agents = new Map<string, Map<string, Kept<AgentContextRecord>>>();
  private readonly conversations = new Map<string, Map<string, Kept<ConversationContextRecord>>>();
  /** Bumped by every local change: a read begun before one keeps nothing. */
  private generation = 0;

  constructor(
    private readonly inner: ContextLookup,
    private readonly deps: { readonly ttlMs?: number; readonly clock?: () => number } = {},
  ) {}

  agentContextsByIds(orgId: string, ids: readonly string[]): Promise<AgentContextRecord[]> {
    return this.lookup(this.agents, orgId, ids, (missing) => this.inner.agentContextsByIds(orgId, missing));
  }

  conversationContextsByIds(orgId: string, ids: readonly string[]): Promise<ConversationContextRecord[]> {
    return this.lookup(this.conversations, orgId, ids, (missing) => this.inner.conversationContextsByIds(orgId, missing));
  }

  /** After this instance changed (and committed) a context of the org. */
  changed(orgId: string): void {
    this.generation++;
    this.agents.delete(orgId);
    this.conversations.delete(orgId);
  }

  private async lookup<T extends { readonly id: string }>(
    byOrg: Map<string, Map<string, Kept<T>>>,
    orgId: string,
    ids: readonly string[],
    read: (missing: readonly string[]) => Promise<T[]>,
  ): Promise<T[]> {
    const now = this.now();
    const found: T[] = [];
    const missing: string[] = [];
    const kept = byOrg.get(orgId);
    for (const id of ids) {
      const hit = kept?.get(id);
      if (hit && hit.until > now) found.push(hit.record);
      else missing.push(id);
    }
    if (missing.length === 0) return found;
    const generation = this.generation;
    const fetched = await read(missing);
    if (generation === this.generation && fetched.length > 0) {
      if (!byOrg.has(orgId) && byOrg.size >= MAX_ORGS) byOrg.clear();
      const org = byOrg.get(orgId) ?? new Map<string, Kept<T>>();
      byOrg.set(orgId, org);
      // Trusted from when the read was asked for.
      const until = now + (this.deps.ttlMs ?? CONTEXT_CACHE_TTL_MS);
      for (const record of fetched) org.set(record.id, { record, until });
    }
    return [...found, ...fetched];
  }

  private now(): number {
    return this.deps.clock?.() ?? Date.now();
  }
}
