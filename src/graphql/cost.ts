import {
  getNamedType,
  getNullableType,
  getOperationAST,
  getVariableValues,
  GraphQLError,
  isCompositeType,
  isListType,
  visit,
  type ASTNode,
  type DocumentNode,
  type GraphQLField,
  type GraphQLSchema,
} from 'graphql';
import { getComplexity, type ComplexityEstimatorArgs } from 'graphql-query-complexity';
import { MAX_PAGE_SIZE } from '../domain/pagination';

/**
 * The cost model: an operation costs the number of values its response can hold at worst,
 * estimated before it runs (graphql-query-complexity walks the document; `fieldCost` prices
 * each field). This is the one place that says what each field costs:
 *
 * | field                                         | cost                                                  |
 * |-----------------------------------------------|-------------------------------------------------------|
 * | scalar or enum (`__typename` too)             | 1                                                     |
 * | object                                        | 1 + its selection                                     |
 * | paginated (has `first`/`last`): the connections `agentSessions`, `agentSessionsForUser`, `AgentSession.turns`, `turnsUsingChunk`, `turnsUsingFile`, `AgentSession.forks`, `webhookDeliveries` | 1 + page × its selection |
 * | `edges` of a connection                       | 1 + (1 + its selection): the page is counted at the connection |
 * | `nodes(ids:)`                                 | 1 + ids × (1 + its selection)                         |
 * | any other list of objects                     | 1 + size × (1 + its selection), size from LIST_SIZES  |
 * | any other list of scalars                     | 1 + size                                              |
 *
 * `page` is `first` (or `last`) as the operation gives it — a literal, a variable, or, when
 * left out or null, the argument's schema default (`turns(first: Int = 50)`,
 * `agentSessions(first: Int = 25)`) — capped at MAX_PAGE_SIZE, the largest page a resolver
 * serves. The page multiplies everything selected under the connection, `pageInfo` and
 * `totalCount` included: a small overestimate (4 × page at most) for one simple rule.
 * Lists without paging arguments are assumed to hold LIST_SIZES items: typical sizes, not
 * limits; a response that outgrows its estimate is stopped by the response budget
 * (response-budget.ts). Nested lists multiply.
 */
export const LIST_SIZES: Readonly<Record<string, number>> = {
  'AgentSessionSummaryConnection.edges': 1,
  'AgentSessionTurnConnection.edges': 1,
  // The owner and the users who added turns; most sessions have one to three.
  'AgentSession.participants': 10,
  'AgentSessionSummary.participants': 10,
  // RETRIEVAL_TOP_K chunks per turn (default 8).
  'AgentSessionTurn.chunkRefs': 10,
  // What an IDE sends with an instruction (at most 200).
  'AgentSessionTurn.activeFileRefs': 10,
  'AgentSessionTurn.pendingToolCalls': 5,
  // Server rounds (MAX_SERVER_TOOL_ROUNDS, default 8) of a few calls each, plus client calls.
  'AgentSessionTurn.toolCalls': 10,
  // Files written by write_file.
  'AgentSessionTurn.files': 5,
  // Snippets of files the request also sent as active files: a few of RETRIEVAL_TOP_K.
  'AgentSessionTurn.skippedSnippets': 5,
  // Scopes a request names (at most 20).
  'AgentSessionTurn.retrievalPathPrefixes': 5,
  'AgentSessionTurn.warnings': 5,
  'AgentSessionTurn.errors': 5,
  'AgentToolContinuation.toolCalls': 5,
  'AgentFinalResponse.files': 5,
  'AgentFinalResponse.toolResults': 5,
  'AgentFinalResponse.userWarnings': 5,
  // Client tools of a conversation context (at most 64).
  'ConversationContext.tools': 10,
  // The org's contexts, listed whole.
  'Query.agentContexts': 20,
  'Query.conversationContexts': 20,
  'Viewer.roles': 5,
  // One per day of the window: at most 366 (usageByDay refuses more).
  'UsageByDay.days': 366,
  'WebhookDeliveryConnection.edges': 1,
  // An org's endpoints, listed whole.
  'Query.webhookEndpoints': 10,
  // The five event types.
  'WebhookEndpoint.events': 5,
  // Retries over 24 hours are about twenty attempts; the newest 50 are kept.
  'WebhookDelivery.attempts': 20,
};

/** Lists exactly as long as one of their arguments (a list the resolver refuses beyond MAX_PAGE_SIZE). */
export const ARGUMENT_SIZED_LISTS: Readonly<Record<string, string>> = { 'Query.nodes': 'ids' };

/** Size assumed for a list missing from LIST_SIZES (a test keeps the table complete). */
const UNLISTED_SIZE = MAX_PAGE_SIZE;
/** Introspection lists (types, fields, args) are bounded by the schema itself; off in production. */
const INTROSPECTION_SIZE = 1;
/** Evaluated selections (fragment spreads re-counted per use) before the estimate gives up and refuses. */
const MAX_EVALUATED_NODES = 10_000;

export const PAGE_ARGUMENTS = ['first', 'last'] as const;

/** The page a paginated field serves for these (coerced) arguments; null when it has no page argument. */
export function pageSizeOf(field: GraphQLField<unknown, unknown>, args: Readonly<Record<string, unknown>>): number | null {
  const pageArgs = field.args.filter((a) => (PAGE_ARGUMENTS as readonly string[]).includes(a.name));
  if (pageArgs.length === 0) return null;
  // A page argument neither given nor defaulted (`last` beside `first: Int = 25`) does not
  // size the page; with no size at all, the largest page a resolver serves.
  const sizes = pageArgs.flatMap((arg) => {
    const given = args[arg.name];
    const value = typeof given === 'number' ? given : arg.defaultValue;
    if (value === undefined || value === null) return [];
    return [typeof value === 'number' && Number.isFinite(value) ? Math.min(Math.max(Math.ceil(value), 0), MAX_PAGE_SIZE) : MAX_PAGE_SIZE];
  });
  return sizes.length === 0 ? MAX_PAGE_SIZE : Math.max(...sizes);
}

function fieldCost({ type, field, args, childComplexity }: ComplexityEstimatorArgs): number {
  const page = pageSizeOf(field, args);
  if (page !== null) return 1 + page * childComplexity;
  if (!isListType(getNullableType(field.type))) return 1 + childComplexity;
  const sizedBy = ARGUMENT_SIZED_LISTS[`${type.name}.${field.name}`];
  const given: unknown = sizedBy === undefined ? undefined : args[sizedBy];
  if (Array.isArray(given)) return 1 + Math.min(given.length, MAX_PAGE_SIZE) * (1 + childComplexity);
  const size = type.name.startsWith('__') ? INTROSPECTION_SIZE : (LIST_SIZES[`${type.name}.${field.name}`] ?? UNLISTED_SIZE);
  return 1 + size * (isCompositeType(getNamedType(field.type)) ? 1 + childComplexity : 1);
}

/**
 * The cost of the operation `operationName` names (or the document's only one) with these
 * variables. Null when the operation cannot be identified or the variables do not coerce:
 * execution refuses those itself, without running anything.
 */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Readonly<Record<string, unknown>> | null | undefined,
): number | null {
  const operation = getOperationAST(document, operationName);
  if (!operation) return null;
  if (getVariableValues(schema, operation.variableDefinitions ?? [], variables ?? {}).errors) return null;
  return getComplexity({
    schema,
    query: document,
    variables: { ...variables },
    ...(operation.name ? { operationName: operation.name.value } : {}),
    estimators: [fieldCost],
    maxQueryNodes: MAX_EVALUATED_NODES,
  });
}

/**
 * The cost model's verdict: `within` the limit, `refused` (over it, or too intricate to
 * estimate), or `unestimated` when the operation cannot be identified or the variables do not
 * coerce (execution refuses those itself, without running anything).
 */
export type CostVerdict =
  | { readonly kind: 'within' }
  | { readonly kind: 'refused'; readonly error: GraphQLError }
  | { readonly kind: 'unestimated' };

export function costVerdict(
  schema: GraphQLSchema,
  maxCost: number,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Readonly<Record<string, unknown>> | null | undefined,
): CostVerdict {
  let cost: number | null;
  try {
    cost = operationCost(schema, document, operationName, variables);
  } catch (e) {
    // The estimate stopped at MAX_EVALUATED_NODES (fragments spread over and over).
    if (!(e instanceof GraphQLError)) throw e;
    return {
      kind: 'refused',
      error: new GraphQLError(`Query is too complex to estimate (${e.message}); the cost limit is ${maxCost}`, {
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED', maxCost },
      }),
    };
  }
  if (cost === null) return { kind: 'unestimated' };
  if (cost <= maxCost) return { kind: 'within' };
  return {
    kind: 'refused',
    error: new GraphQLError(`Query cost ${cost} exceeds the limit of ${maxCost}: ask for smaller pages (first) or fewer nested lists`, {
      extensions: { code: 'GRAPHQL_VALIDATION_FAILED', cost, maxCost },
    }),
  };
}

/**
 * The variables whose values can change an estimate: those a page argument (`first`, `last`)
 * or a directive (`@include`, `@skip`) reads. `fieldCost` reads no other argument, so any
 * other variable (an execute's instruction and files) leaves the cost as it is.
 */
export function costVariables(document: DocumentNode): ReadonlySet<string> {
  const names = new Set<string>();
  const collect = (node: ASTNode) =>
    visit(node, {
      Variable(variable) {
        names.add(variable.name.value);
      },
    });
  visit(document, {
    // A variable's definition names it without reading it.
    VariableDefinition: () => false,
    Argument(argument) {
      if ((PAGE_ARGUMENTS as readonly string[]).includes(argument.name.value)) collect(argument.value);
    },
    Directive(directive) {
      collect(directive);
      return false;
    },
  });
  return names;
}
