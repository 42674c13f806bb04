import { ApolloArmor } from '@escape.tech/graphql-armor';
import { MaxTokensParserWLexer } from '@escape.tech/graphql-armor-max-tokens';
import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError, type DocumentNode, type GraphQLFormattedError, type GraphQLSchema, type ValidationRule } from 'graphql';
import type { AbuseLimits } from '../config';
import type { GraphQLContext } from './context';
import { checkCost } from './cost';
import { formatError, withoutSuggestions } from './error-mapping';
import { ResponseBudget } from './response-budget';

export type ErrorFormatter = (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;

/** One set of limits for every transport; Apollo gets plugins, the WebSocket server calls the same checks itself. */
export interface Protection {
  readonly plugins: ApolloServerPlugin<GraphQLContext>[];
  /** Depth, aliases and directives (graphql-armor): they need the document only. */
  readonly validationRules: ValidationRule[];
  /** Parses a document under the token limit. */
  readonly parse: (source: string) => DocumentNode;
  /** The cost model's verdict once the variables are known; null when the operation may run. */
  readonly checkCost: (
    document: DocumentNode,
    operationName: string | null | undefined,
    variables: Readonly<Record<string, unknown>> | null | undefined,
  ) => GraphQLError | null;
  /** A fresh response budget for one operation (or one subscription event). */
  readonly responseBudget: () => ResponseBudget;
  /** formatError, without schema suggestions in production. */
  readonly formatError: ErrorFormatter;
}

/**
 * graphql-armor's depth, alias, directive and token limits, the cost model (cost.ts) in
 * place of armor's cost limit, which read only literal page sizes, and the response budget.
 */
export function createProtection(limits: AbuseLimits, production: boolean, schema: GraphQLSchema): Protection {
  const armor = new ApolloArmor({
    maxDepth: { n: limits.maxDepth, exposeLimits: true },
    maxAliases: { n: limits.maxAliases, exposeLimits: true },
    maxDirectives: { n: limits.maxDirectives, exposeLimits: true },
    maxTokens: { n: limits.maxTokens, exposeLimits: true },
    costLimit: { enabled: false },
    // Replaced by `formatError` below, which also hides the enum-value and inline-fragment hints armor misses.
    blockFieldSuggestion: { enabled: false },
  });
  const { plugins, validationRules } = armor.protect();
  const check = memoisedCost((document, operationName, variables) =>
    checkCost(schema, limits.maxCost, document, operationName, variables),
  );
  return {
    plugins: [...(plugins as ApolloServerPlugin<GraphQLContext>[]), costAndBudgetPlugin(check)],
    validationRules,
    parse: (source) => new MaxTokensParserWLexer(source, { n: limits.maxTokens, exposeLimits: true }).parseDocument(),
    checkCost: check,
    responseBudget: () => new ResponseBudget(limits.maxResponseItems),
    // Suggestions help while developing; in production they would map the schema for an attacker.
    formatError: production
      ? (formatted, error) => {
          const result = formatError(formatted, error);
          return { ...result, message: withoutSuggestions(result.message) };
        }
      : formatError,
  };
}

/**
 * The cost check runs once the operation is resolved, when Apollo knows the variables (a
 * validation rule would see only the document), and refuses before anything executes.
 * A response that exceeded its budget is replaced by the budget's single error.
 */
function costAndBudgetPlugin(check: Protection['checkCost']): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, request }) {
          const error = check(document, request.operationName, request.variables);
          if (error) throw new GraphQLError(error.message, { extensions: { ...error.extensions, http: { status: 400 } } });
        },
        async willSendResponse({ response, contextValue }) {
          if (contextValue.budget.exceeded && response.body.kind === 'single') {
            response.body.singleResult = contextValue.budget.result();
          }
        },
      };
    },
  };
}

/** Verdicts kept per document; variables beyond this many distinct sets are estimated each time. */
const VERDICTS_PER_DOCUMENT = 32;
/** Variables longer than this (as JSON) are not worth a cache key. */
const MAX_KEY_LENGTH = 1_024;

/**
 * The cost verdict is a pure function of the document, the operation name and the variables,
 * and Apollo hands out the same parsed document for the same query text (its document
 * store), so a repeated operation reuses its verdict instead of walking the document again.
 * Held weakly by the document: the cache lives no longer than Apollo's own entry.
 */
function memoisedCost(check: Protection['checkCost']): Protection['checkCost'] {
  const verdicts = new WeakMap<DocumentNode, Map<string, GraphQLError | null>>();
  return (document, operationName, variables) => {
    const key = `${operationName ?? ''}\n${JSON.stringify(variables ?? {})}`;
    if (key.length > MAX_KEY_LENGTH) return check(document, operationName, variables);
    let known = verdicts.get(document);
    const cached = known?.get(key);
    if (cached !== undefined) return cached;
    const verdict = check(document, operationName, variables);
    if (!known) verdicts.set(document, (known = new Map()));
    if (known.size >= VERDICTS_PER_DOCUMENT) known.clear();
    known.set(key, verdict);
    return verdict;
  };
}
