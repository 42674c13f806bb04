import { randomUUID } from 'node:crypto';
import { type DeepPartial, type EntitySchema, type FindOptionsWhere } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { isAdmin, type Caller } from '../domain/caller';
import {
  parseAgentContext,
  parseConversationContext,
  type AgentContextDraft,
  type AgentContextRecord,
  type ConversationContextDraft,
  type ConversationContextRecord,
} from '../domain/contexts';
import { forbidden, notFound } from '../domain/errors';
import type { Database } from '../persistence/database';
import type { AgentContextRow, ContextEntities, ConversationContextRow, ToolDefinitionDoc } from './context.entities';
import type { ContextCatalog } from './context-directory.port';

/** Rows of the by-id reads, as the drivers hand them out. */
interface RawAgentContext {
  readonly id: string;
  readonly org_id: string;
  readonly name: string;
  readonly description: string | null;
  readonly vector_collection: string;
  readonly default_model: string;
}

interface RawConversationContext {
  readonly id: string;
  readonly org_id: string;
  readonly name: string;
  readonly description: string | null;
  readonly system_prompt: string;
  readonly model: string | null;
  readonly temperature: number | string | null;
  readonly tools: string | null;
}

/**
 * The agent and conversation contexts of each org (DD-007: session persistence keeps only
 * their ids; names are resolved here). Every read is scoped to one org.
 */
export class ContextDirectory implements ContextCatalog {
  constructor(
    private readonly db: Database<ContextEntities>,
    private readonly now: () => Date = () => new Date(),
    /** Told once a change to an org's contexts has ended, however it ended (a failed commit may still have landed on MySQL). */
    private readonly onChanged?: (orgId: string) => void,
  ) {}

  async listAgentContexts(orgId: string): Promise<AgentContextRecord[]> {
    const rows = await this.db.run((em) =>
      em.find(this.db.entities.agentContexts, {
        where: { orgId },
        order: { name: 'ASC', id: 'ASC' },
      }),
    );
    return rows.map(toAgentContext);
  }

  async listConversationContexts(orgId: string): Promise<ConversationContextRecord[]> {
    const rows = await this.db.run((em) =>
      em.find(this.db.entities.conversationContexts, {
        where: { orgId },
        order: { name: 'ASC', id: 'ASC' },
      }),
    );
    return rows.map(toConversationContext);
  }

  /**
   * Every execute resolves its contexts: one plain statement each, mapped by hand (the
   * repository's find built and hydrated the query for more CPU than the database spent),
   * batched (Database.read) with the execute's other reads into one round trip.
   */
  async agentContextsByIds(orgId: string, ids: readonly string[]): Promise<AgentContextRecord[]> {
    const rows = await this.byIds<RawAgentContext>('agent_contexts', 'id, org_id, name, description, vector_collection, default_model', orgId, ids);
    return rows.map((r) => ({
      id: r.id,
      orgId: r.org_id,
      name: r.name,
      description: r.description,
      vectorCollection: r.vector_collection,
      defaultModel: r.default_model,
    }));
  }

  async conversationContextsByIds(orgId: string, ids: readonly string[]): Promise<ConversationContextRecord[]> {
    const rows = await this.byIds<RawConversationContext>(
      'conversation_contexts',
      'id, org_id, name, description, system_prompt, model, temperature, tools',
      orgId,
      ids,
    );
    return rows.map((r) => ({
      id: r.id,
      orgId: r.org_id,
      name: r.name,
      description: r.description,
      systemPrompt: r.system_prompt,
      model: r.model,
      // mysql2 may hand DOUBLE values back as strings.
      temperature: r.temperature === null ? null : Number(r.temperature),
      // The tools column as persistence/columns.ts jsonColumn stores it: null or empty is none.
      tools: r.tools === null || r.tools === '' ? [] : (JSON.parse(r.tools) as ToolDefinitionDoc[]),
    }));
  }

  /** One org's rows of a context table by id, as the driver hands them out. */
  private byIds<R>(table: 'agent_contexts' | 'conversation_contexts', columns: string, orgId: string, ids: readonly string[]): Promise<R[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db.read<R>(`SELECT ${columns} FROM ${table} WHERE org_id = ? AND id IN (${ids.map(() => '?').join(', ')})`, [orgId, ...ids]);
  }

  /** Admin only. With an id it updates that context of the caller's org; without, it creates one. */
  async upsertAgentContext(caller: Caller, draft: AgentContextDraft): Promise<AgentContextRecord> {
    assertAdmin(caller);
    const fields = parseAgentContext(draft);
    const row = await this.upsert<AgentContextRow>(this.db.entities.agentContexts, caller, draft.id, fields);
    return toAgentContext(row);
  }

  async upsertConversationContext(caller: Caller, draft: ConversationContextDraft): Promise<ConversationContextRecord> {
    assertAdmin(caller);
    const { tools, ...rest } = parseConversationContext(draft);
    const fields = { ...rest, tools: tools.map((t) => ({ ...t })) };
    const row = await this.upsert<ConversationContextRow>(this.db.entities.conversationContexts, caller, draft.id, fields);
    return toConversationContext(row);
  }

  private async upsert<Row extends AgentContextRow | ConversationContextRow>(
    entity: EntitySchema<Row>,
    caller: Caller,
    id: string | null | undefined,
    fields: Omit<Row, 'id' | 'orgId' | 'creationDate' | 'lastUpdatedDate'>,
  ): Promise<Row> {
    const now = this.now();
    try {
      return await this.upsertIn(entity, caller, id, fields, now);
    } finally {
      this.onChanged?.(caller.orgId);
    }
  }

  private upsertIn<Row extends AgentContextRow | ConversationContextRow>(
    entity: EntitySchema<Row>,
    caller: Caller,
    id: string | null | undefined,
    fields: Omit<Row, 'id' | 'orgId' | 'creationDate' | 'lastUpdatedDate'>,
    now: Date,
  ): Promise<Row> {
    return this.db.transaction(async (em) => {
      if (id) {
        const where = { id, orgId: caller.orgId } as FindOptionsWhere<Row>;
        const existing = await em.findOne(entity, { where });
        if (!existing) throw notFound('context');
        const updated = { ...existing, ...fields, lastUpdatedDate: now };
        await em.save(entity, updated as DeepPartial<Row>);
        return updated;
      }
      const created = { ...fields, id: randomUUID(), orgId: caller.orgId, creationDate: now, lastUpdatedDate: now } as Row;
      await em.insert(entity, created as QueryDeepPartialEntity<Row>);
      return created;
    });
  }
}

function assertAdmin(caller: Caller): void {
  if (!isAdmin(caller)) throw forbidden('only organisation admins may change contexts');
}

const toAgentContext = (row: AgentContextRow): AgentContextRecord => ({
  id: row.id,
  orgId: row.orgId,
  name: row.name,
  description: row.description,
  vectorCollection: row.vectorCollection,
  defaultModel: row.defaultModel,
});

const toConversationContext = (row: ConversationContextRow): ConversationContextRecord => ({
  id: row.id,
  orgId: row.orgId,
  name: row.name,
  description: row.description,
  systemPrompt: row.systemPrompt,
  model: row.model,
  temperature: row.temperature,
  tools: row.tools,
});
