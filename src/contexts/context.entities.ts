import { EntitySchema } from 'typeorm';
import { jsonColumn } from '../persistence/columns';
import { columnTypes, type Dialect } from '../persistence/dialect';

export interface ToolDefinitionDoc {
  name: string;
  description: string | null;
  parametersJson: string;
}

export interface AgentContextRow {
  id: string;
  orgId: string;
  name: string;
  description: string | null;
  vectorCollection: string;
  defaultModel: string;
  creationDate: Date;
  lastUpdatedDate: Date;
}

export interface ConversationContextRow {
  id: string;
  orgId: string;
  name: string;
  description: string | null;
  systemPrompt: string;
  model: string | null;
  temperature: number | null;
  tools: ToolDefinitionDoc[];
  creationDate: Date;
  lastUpdatedDate: Date;
}

export function contextEntities(dialect: Dialect) {
  const t = columnTypes(dialect);
  const common = {
    id: { type: 'varchar' as const, length: 64, primary: true, ...t.exactId },
    orgId: { type: 'varchar' as const, length: 64, name: 'org_id', ...t.exactId },
    name: { type: 'varchar' as const, length: 200 },
    description: { type: t.text, nullable: true },
    creationDate: { ...t.datetime, name: 'creation_date' },
    lastUpdatedDate: { ...t.datetime, name: 'last_updated_date' },
  };
  const agentContexts = new EntitySchema<AgentContextRow>({
    name: 'AgentContext',
    tableName: 'agent_contexts',
    columns: {
      ...common,
      vectorCollection: { type: 'varchar', length: 200, name: 'vector_collection' },
      defaultModel: { type: 'varchar', length: 100, name: 'default_model' },
    },
    indices: [{ name: 'idx_agent_contexts_org', columns: ['orgId', 'name'] }],
  });
  const conversationContexts = new EntitySchema<ConversationContextRow>({
    name: 'ConversationContext',
    tableName: 'conversation_contexts',
    columns: {
      ...common,
      systemPrompt: { type: t.longText, name: 'system_prompt' },
      model: { type: 'varchar', length: 100, nullable: true },
      temperature: { type: t.double, nullable: true },
      tools: { type: t.longText, transformer: jsonColumn<ToolDefinitionDoc[]>([]) },
    },
    indices: [{ name: 'idx_conversation_contexts_org', columns: ['orgId', 'name'] }],
  });
  return { agentContexts, conversationContexts };
}

export type ContextEntities = ReturnType<typeof contextEntities>;
