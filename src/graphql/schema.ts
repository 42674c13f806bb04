import 'reflect-metadata';
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchemaSync, type PubSub } from 'type-graphql';
import { countListItems } from './response-budget';
import { SessionConnectionResolver, TurnConnectionResolver } from './resolvers/connection.resolver';
import { ContextResolver } from './resolvers/context.resolver';
import { EventCursorResolver } from './resolvers/event-cursor.resolver';
import { ExecuteResolver, ToolCallFieldsResolver, ToolResultFieldsResolver } from './resolvers/execute.resolver';
import { ProvenanceResolver } from './resolvers/provenance.resolver';
import {
  SessionFieldsResolver,
  SessionSharedFieldsResolver,
  SummarySharedFieldsResolver,
} from './resolvers/session-fields.resolver';
import { SessionMutationResolver } from './resolvers/session-mutation.resolver';
import { SessionQueryResolver } from './resolvers/session-query.resolver';
import { SubscriptionResolver } from './resolvers/subscription.resolver';
import { TurnResolver } from './resolvers/turn.resolver';
import { TurnRequestFieldsResolver } from './resolvers/turn-request.resolver';
import { UsageResolver } from './resolvers/usage.resolver';
import { ViewerResolver } from './resolvers/viewer.resolver';

export const resolvers = [
  ViewerResolver,
  SessionQueryResolver,
  SessionMutationResolver,
  SessionSharedFieldsResolver,
  SummarySharedFieldsResolver,
  SessionFieldsResolver,
  SessionConnectionResolver,
  TurnConnectionResolver,
  TurnResolver,
  TurnRequestFieldsResolver,
  ContextResolver,
  ProvenanceResolver,
  SubscriptionResolver,
  EventCursorResolver,
  UsageResolver,
  ExecuteResolver,
  ToolResultFieldsResolver,
  ToolCallFieldsResolver,
] as const;

let built: GraphQLSchema | null = null;

/**
 * type-graphql insists on a pub/sub once there are subscriptions, even though every one of
 * ours brings its own `subscribe` (event sources from graphql/live); topic-based
 * subscriptions would bypass per-event authorisation, so this one refuses them.
 */
const noTopicSubscriptions: PubSub = {
  publish: () => {
    throw new Error('topic-based subscriptions are not used; publish through the event bus');
  },
  subscribe: () => {
    throw new Error('topic-based subscriptions are not used; give @Subscription a `subscribe` source');
  },
};

/**
 * The executable schema; type-graphql's metadata is global, so it is built once per process.
 * Every list field counts its items against the operation's response budget.
 */
export function gatewaySchema(): GraphQLSchema {
  built ??= countListItems(buildSchemaSync({ resolvers: [...resolvers], validate: false, pubSub: noTopicSubscriptions }));
  return built;
}

/** The SDL committed as schema/schema.graphql. */
export const printGatewaySchema = (): string =>
  `# Emitted from the code-first schema by \`npm run schema:emit\`. Do not edit by hand.\n\n${printSchema(
    lexicographicSortSchema(gatewaySchema()),
  )}\n`;
