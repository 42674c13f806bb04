import { ApolloArmor } from '@escape.tech/graphql-armor';
import { MaxTokensParserWLexer } from '@escape.tech/graphql-armor-max-tokens';
import type { ApolloServerPlugin } from '@apollo/server';
import type { DocumentNode, ValidationRule } from 'graphql';
import type { AbuseLimits } from '../config';
import type { GraphQLContext } from './context';

export interface Protection {
  readonly plugins: ApolloServerPlugin<GraphQLContext>[];
  readonly validationRules: ValidationRule[];
  /** Parses a document under the token limit; the WebSocket transport uses it too. */
  readonly parse: (source: string) => DocumentNode;
  /** What the suggestion-blocking plugin does for Apollo, for transports without Apollo plugins. */
  readonly maskSuggestions: (message: string) => string;
}

/** Depth, alias, directive, token and cost limits (graphql-armor), one set for every transport. */
export function createProtection(limits: AbuseLimits, production: boolean): Protection {
  const armor = new ApolloArmor({
    maxDepth: { n: limits.maxDepth, exposeLimits: true },
    maxAliases: { n: limits.maxAliases, exposeLimits: true },
    maxDirectives: { n: limits.maxDirectives, exposeLimits: true },
    maxTokens: { n: limits.maxTokens, exposeLimits: true },
    costLimit: { maxCost: limits.maxCost, exposeLimits: true },
    // Suggestions help while developing; in production they would map the schema for an attacker.
    blockFieldSuggestion: { enabled: production },
  });
  const { plugins, validationRules } = armor.protect();
  return {
    plugins: plugins as ApolloServerPlugin<GraphQLContext>[],
    validationRules,
    parse: (source) => new MaxTokensParserWLexer(source, { n: limits.maxTokens, exposeLimits: true }).parseDocument(),
    maskSuggestions: production ? (message) => message.replace(/Did you mean ".+"\?/g, '[Suggestion hidden]').trim() : (message) => message,
  };
}
