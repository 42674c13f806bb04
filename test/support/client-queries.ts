import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  Kind,
  parse,
  typeFromAST,
  visit,
  type DocumentNode,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { PAGE_ARGUMENTS } from '../../src/graphql/cost';

const ROOT = join(__dirname, '..', '..');

/** The queries a dashboard sends at the largest page size (issue 8): every field of a summary page and of a turn page. */
export const SUMMARY_PAGE = `query SummaryPage($first: Int, $after: String, $filter: AgentSessionFilter) {
  agentSessions(first: $first, after: $after, filter: $filter) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges {
      cursor
      node {
        id name key description isPublic category lastUpdatedDate agentContextId conversationContextId
        turnCount lastTurnStatus lastTurnDate agentContextName conversationContextName
        ownerUser { id text }
        participants { id text }
        lastTurn { id sequenceNumber status statusTimeStamp }
      }
    }
  }
}`;

export const SESSION_TURNS = `query SessionTurns($id: ID!, $first: Int, $after: String) {
  agentSession(id: $id) {
    id name key description isPublic isDraft isDeleted category creationDate lastUpdatedDate
    agentContextId conversationContextId agentContextName conversationContextName
    workspaceId repo defaultLanguage turnCount
    ownerUser { id text }
    ownerOrganization { id text }
    participants { id text }
    usage { inputTokens outputTokens totalTokens estimatedCostUsd isEstimated }
    turns(first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges {
        cursor
        node {
          id sessionId sequenceNumber creationDate status statusTimeStamp mode conversationId
          openAIModel openAIResponseId previousOpenAIResponseId openAIResponseReceivedDate openAIChainExpiresDate
          instructionSummary fullInstructionUrl agentAnswerSummary fullAgentAnswerUrl
          openAIRequestPayloadUrl openAIResponsePayloadUrl warnings errors
          createdByUser { id text }
          chunkRefs { chunkId path startLine endLine contentHash score fileContentHash }
          activeFileRefs { path contentHash sizeBytes isTouched wasSentToLLM wasTooLargeToSend }
          pendingToolCalls { toolCallId name argumentsJson arguments }
          usage { inputTokens outputTokens totalTokens estimatedCostUsd isEstimated }
        }
      }
    }
  }
}`;

/** One alias of the issue's flood: a page of turns, each with its session's page of turns. */
const floodAlias = (i: number, first: string) =>
  `a${i}: agentSession(id: $id) { turns${first} { edges { node { id instructionSummary ` +
  `session { turns${first} { edges { node { id status instructionSummary agentAnswerSummary } } } } } } } }`;

/** The 2.8 KB flood of issue 8, its page sizes given by the variable `$n`. */
export const FLOOD_WITH_VARIABLE = `query Flood($id: ID!, $n: Int) {\n${Array.from({ length: 15 }, (_, i) => floodAlias(i, '(first: $n)')).join('\n')}\n}`;
/** The same with `first` left out: the schema default (50) applies. */
export const FLOOD_WITH_DEFAULT = `query Flood($id: ID!) {\n${Array.from({ length: 15 }, (_, i) => floodAlias(i, '')).join('\n')}\n}`;
/** The same with page sizes written as literals. */
export const FLOOD_WITH_LITERAL = `query Flood($id: ID!) {\n${Array.from({ length: 15 }, (_, i) => floodAlias(i, '(first: 100)')).join('\n')}\n}`;

export interface ClientOperation {
  /** Where it comes from: file and operation name. */
  readonly name: string;
  readonly document: DocumentNode;
  readonly operationName: string | undefined;
  readonly variables: Record<string, unknown>;
}

/**
 * Every operation real clients send: the dashboard queries above, each operation in
 * test/operations/*.graphql and packages/client/src/operations/*.graphql (when that folder exists),
 * and the queries the README shows. Page-size variables are set to `pageSize`; other
 * required variables get a placeholder of their type.
 */
export function clientOperations(schema: GraphQLSchema, pageSize: number): ClientOperation[] {
  const sources: { name: string; text: string }[] = [
    { name: 'dashboard', text: `${SUMMARY_PAGE}\n${SESSION_TURNS}` },
    // One document per folder: an operation may spread a fragment another file of its folder defines.
    ...['test/operations', 'packages/client/src/operations']
      .map((dir) => ({ name: dir, text: graphqlFiles(join(ROOT, dir)).map((file) => readFileSync(join(ROOT, dir, file), 'utf8')).join('\n') }))
      .filter(({ text }) => text.trim() !== ''),
    ...readmeQueries().map((text, i) => ({ name: `README query ${i + 1}`, text })),
  ];
  return sources.flatMap(({ name, text }) => {
    const document = parse(text);
    const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
    return operations.map((operation) => ({
      name: `${name} ${operation.name?.value ?? '(anonymous)'}`,
      document,
      operationName: operation.name?.value,
      variables: variablesFor(schema, operation, pageSize),
    }));
  });
}

function graphqlFiles(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.graphql')).sort() : [];
}

/** The `"query":"…"` bodies of the README's curl examples. */
function readmeQueries(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  return [...readme.matchAll(/"query":("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1] as string) as string);
}

function variablesFor(schema: GraphQLSchema, operation: OperationDefinitionNode, pageSize: number): Record<string, unknown> {
  const pageVariables = new Set<string>();
  visit(operation, {
    Argument(node) {
      if ((PAGE_ARGUMENTS as readonly string[]).includes(node.name.value) && node.value.kind === Kind.VARIABLE) {
        pageVariables.add(node.value.name.value);
      }
    },
  });
  const variables: Record<string, unknown> = {};
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type) as GraphQLInputType;
    if (pageVariables.has(name)) variables[name] = pageSize;
    else if (isNonNullType(type) && !definition.defaultValue) variables[name] = placeholder(type);
  }
  return variables;
}

function placeholder(type: GraphQLInputType): unknown {
  const nullable = getNullableType(type);
  if (isListType(nullable)) return [];
  const named = getNamedType(nullable);
  if (isEnumType(named)) return named.getValues()[0]?.value;
  if (isInputObjectType(named)) {
    return Object.fromEntries(
      Object.values(named.getFields())
        .filter((f) => isNonNullType(f.type) && f.defaultValue === undefined)
        .map((f) => [f.name, placeholder(f.type)]),
    );
  }
  switch (named.name) {
    case 'Int':
    case 'Float':
      return 1;
    case 'Boolean':
      return true;
    case 'DateTimeISO':
      return new Date(0).toISOString();
    default:
      return 'x';
  }
}
