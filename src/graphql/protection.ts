import { ApolloArmor } from '@escape.tech/graphql-armor';
import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError, parse, type DocumentNode, type GraphQLFormattedError, type GraphQLSchema, type ParseOptions, type ValidationRule } from 'graphql';
import type { AbuseLimits } from '../config';
import type { GraphQLContext } from './context';
import { costVariables, costVerdict, type CostVerdict } from './cost';
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
  /**
   * The same token limit for Apollo's own parse, so a document it cannot parse is a 400
   * GRAPHQL_PARSE_FAILED: armor's Apollo plugin parsed in a hook, where any syntax error
   * became a 500.
   */
  readonly parseOptions: ParseOptions;
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
 * graphql-armor's depth, alias, directive and token limits (Apollo's parse counts tokens
 * itself, `parseOptions`), the cost model (cost.ts) in place of armor's cost limit, which
 * read only literal page sizes, and the response budget.
 */
export function createProtection(limits: AbuseLimits, production: boolean, schema: GraphQLSchema): Protection {
  const armor = new ApolloArmor({
    maxDepth: { n: limits.maxDepth, exposeLimits: true },
    maxAliases: { n: limits.maxAliases, exposeLimits: true },
    maxDirectives: { n: limits.maxDirectives, exposeLimits: true },
    maxTokens: { enabled: false },
    costLimit: { enabled: false },
    // Replaced by `formatError` below, which also hides the enum-value and inline-fragment hints armor misses.
    blockFieldSuggestion: { enabled: false },
  });
  const { plugins, validationRules } = armor.protect();
  const check = memoisedCost((document, operationName, variables) =>
    costVerdict(schema, limits.maxCost, document, operationName, variables),
  );
  return {
    plugins: [...(plugins as ApolloServerPlugin<GraphQLContext>[]), costAndBudgetPlugin(check)],
    validationRules,
    // graphql-js's own token limit, as Apollo applies it: the same error and location on every transport.
    parse: (source) => parse(source, { maxTokens: limits.maxTokens }),
    parseOptions: { maxTokens: limits.maxTokens },
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

type Estimate = (
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Readonly<Record<string, unknown>> | null | undefined,
) => CostVerdict;

/** A document's remembered verdicts, by operation name and the values of its cost variables. */
interface DocumentVerdicts {
  readonly costVariables: readonly string[];
  readonly verdicts: Map<string, CostVerdict>;
}

/**
 * The verdict is a pure function of the document, the operation name and the variables that
 * can change the estimate (cost.ts `costVariables`: page sizes and directives), and Apollo
 * hands out the same parsed document for the same query text (its document store). So a
 * repeated operation reuses its verdict instead of walking the document again, also when its
 * other variables differ every time, as an execute's instruction and files do. Only verdicts
 * that were estimated are kept: variables that did not coerce say nothing about the next ones.
 * Held weakly by the document: the cache lives no longer than Apollo's own entry.
 */
function memoisedCost(estimate: Estimate): Protection['checkCost'] {
  const byDocument = new WeakMap<DocumentNode, DocumentVerdicts>();
  const errorOf = (verdict: CostVerdict) => (verdict.kind === 'refused' ? verdict.error : null);
  return (document, operationName, variables) => {
    let known = byDocument.get(document);
    if (!known) byDocument.set(document, (known = { costVariables: [...costVariables(document)], verdicts: new Map() }));
    const key = `${operationName ?? ''}\n${JSON.stringify(costValues(known.costVariables, variables))}`;
    if (key.length > MAX_KEY_LENGTH) return errorOf(estimate(document, operationName, variables));
    const cached = known.verdicts.get(key);
    if (cached) return errorOf(cached);
    const verdict = estimate(document, operationName, variables);
    if (verdict.kind !== 'unestimated') {
      if (known.verdicts.size >= VERDICTS_PER_DOCUMENT) known.verdicts.clear();
      known.verdicts.set(key, verdict);
    }
    return errorOf(verdict);
  };
}

/** The cost variables' values as given: a variable left out (its default applies) stays apart from one sent as null. */
function costValues(names: readonly string[], variables: Readonly<Record<string, unknown>> | null | undefined): Record<string, unknown> {
  const given: Record<string, unknown> = {};
  for (const name of names) if (variables && Object.hasOwn(variables, name)) given[name] = variables[name];
  return given;
}
