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
  const check: Protection['checkCost'] = (document, operationName, variables) =>
    checkCost(schema, limits.maxCost, document, operationName, variables);
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
