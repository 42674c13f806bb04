import { badInput } from './errors';
import { LIMITS, optionalText, requireText } from './validation';

export interface AgentContextRecord {
  readonly id: string;
  readonly orgId: string;
  readonly name: string;
  readonly description: string | null;
  readonly vectorCollection: string;
  readonly defaultModel: string;
}

export interface ToolDefinition {
  readonly name: string;
  readonly description: string | null;
  readonly parametersJson: string;
}

export interface ConversationContextRecord {
  readonly id: string;
  readonly orgId: string;
  readonly name: string;
  readonly description: string | null;
  readonly systemPrompt: string;
  readonly model: string | null;
  readonly temperature: number | null;
  readonly tools: readonly ToolDefinition[];
}

export interface AgentContextDraft {
  readonly id?: string | null;
  readonly name: string;
  readonly description?: string | null;
  readonly vectorCollection: string;
  readonly defaultModel: string;
}

export interface ConversationContextDraft {
  readonly id?: string | null;
  readonly name: string;
  readonly description?: string | null;
  readonly systemPrompt: string;
  readonly model?: string | null;
  readonly temperature?: number | null;
  readonly tools?: readonly { name: string; description?: string | null; parametersJson: string }[] | null;
}

const COLLECTION = /^[A-Za-z0-9_.-]{1,200}$/;
/** The provider's function-name rule; a tool the provider would reject is refused up front. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_TOOLS = 64;
const MAX_TOOL_SCHEMA = 64 * 1024;

export function parseAgentContext(draft: AgentContextDraft): Omit<AgentContextRecord, 'id' | 'orgId'> {
  const vectorCollection = requireText('vectorCollection', draft.vectorCollection, LIMITS.shortText);
  if (!COLLECTION.test(vectorCollection)) {
    throw badInput('vectorCollection may contain only letters, digits, "_", "-" and "."', { field: 'vectorCollection' });
  }
  // "__" separates the org from the collection in org-scoped collection names (retrieval/collection.ts).
  if (vectorCollection.includes('__')) {
    throw badInput('vectorCollection must not contain "__" (it separates the organisation in collection names)', { field: 'vectorCollection' });
  }
  return {
    name: requireText('name', draft.name, LIMITS.name),
    description: optionalText('description', draft.description, LIMITS.description),
    vectorCollection,
    defaultModel: requireText('defaultModel', draft.defaultModel, 100),
  };
}

export function parseConversationContext(
  draft: ConversationContextDraft,
): Omit<ConversationContextRecord, 'id' | 'orgId'> {
  const temperature = draft.temperature ?? null;
  if (temperature !== null && !(temperature >= 0 && temperature <= 2)) {
    throw badInput('temperature must be between 0 and 2', { field: 'temperature' });
  }
  const tools = (draft.tools ?? []).map(parseTool);
  if (tools.length > MAX_TOOLS) throw badInput(`at most ${MAX_TOOLS} tools`, { field: 'tools' });
  const names = new Set(tools.map((t) => t.name));
  if (names.size !== tools.length) throw badInput('tool names must be unique', { field: 'tools' });
  return {
    name: requireText('name', draft.name, LIMITS.name),
    description: optionalText('description', draft.description, LIMITS.description),
    systemPrompt: requireText('systemPrompt', draft.systemPrompt, LIMITS.systemPrompt),
    model: optionalText('model', draft.model, 100),
    temperature,
    tools,
  };
}

function parseTool(tool: { name: string; description?: string | null; parametersJson: string }): ToolDefinition {
  if (!TOOL_NAME.test(tool.name)) {
    throw badInput(`tool name "${tool.name.slice(0, 80)}" must match ${TOOL_NAME.source}`, { field: 'tools.name' });
  }
  if (tool.parametersJson.length > MAX_TOOL_SCHEMA) {
    throw badInput(`parametersJson of tool ${tool.name} is too large`, { field: 'tools.parametersJson' });
  }
  let schema: unknown;
  try {
    schema = JSON.parse(tool.parametersJson);
  } catch {
    throw badInput(`parametersJson of tool ${tool.name} is not valid JSON`, { field: 'tools.parametersJson' });
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw badInput(`parametersJson of tool ${tool.name} must be a JSON Schema object`, { field: 'tools.parametersJson' });
  }
  return {
    name: tool.name,
    description: optionalText('tools.description', tool.description, LIMITS.description),
    parametersJson: JSON.stringify(schema),
  };
}
