import 'reflect-metadata';
import { assertObjectType, lexicographicSortSchema, printSchema, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import type { SessionSummaryRecord } from '../sessions/session-store.port';
import { buildSchemaSync, type PubSub } from 'type-graphql';
import { countListItems } from './response-budget';
import { SessionConnectionResolver, TurnConnectionResolver } from './resolvers/connection.resolver';
import { ContextResolver } from './resolvers/context.resolver';
import { EventCursorResolver } from './resolvers/event-cursor.resolver';
import { ExecuteResolver, ToolCallFieldsResolver, ToolResultFieldsResolver } from './resolvers/execute.resolver';
import { ForkMutationResolver, SessionForkFieldsResolver, SessionForkOriginResolver, TurnForkFieldsResolver } from './resolvers/fork.resolver';
import { NodeResolver } from './resolvers/node.resolver';
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
import { WebhookResolver } from './resolvers/webhook.resolver';

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
  WebhookResolver,
  ForkMutationResolver,
  SessionForkFieldsResolver,
  TurnForkFieldsResolver,
  SessionForkOriginResolver,
  NodeResolver,
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
  built ??= namesReadWithThePage(
    countListItems(buildSchemaSync({ resolvers: [...resolvers], validate: false, pubSub: noTopicSubscriptions })),
  );
  return built;
}

/**
 * A list's summaries carry the context names read with their page; only a summary reached
 * through AgentSession.summary needs the field resolvers (and their loaders). Each call into
 * type-graphql's resolver machinery (parameters sorted and mapped, a container lookup) for a
 * value already at hand was, at two names per row, a large share of what a list request
 * allocated (docs/performance.md).
 */
function namesReadWithThePage(schema: GraphQLSchema): GraphQLSchema {
  const fields = assertObjectType(schema.getType('AgentSessionSummary')).getFields();
  const names = [
    ['agentContextName', (n: NonNullable<SessionSummaryRecord['contextNames']>) => n.agent],
    ['conversationContextName', (n: NonNullable<SessionSummaryRecord['contextNames']>) => n.conversation],
  ] as const;
  for (const [name, pick] of names) {
    const field = fields[name];
    const resolve = field?.resolve;
    if (!field || !resolve) throw new Error(`AgentSessionSummary.${name} has no resolver to bypass`);
    const fromThePage: GraphQLFieldResolver<Partial<SessionSummaryRecord>, unknown> = (source, args, context, info) =>
      source.contextNames ? pick(source.contextNames) : resolve(source, args, context, info);
    field.resolve = fromThePage as GraphQLFieldResolver<unknown, unknown>;
  }
  return schema;
}

/** The SDL committed as schema/schema.graphql. */
export const printGatewaySchema = (): string =>
  `# Emitted from the code-first schema by \`npm run schema:emit\`. Do not edit by hand.\n\n${printSchema(
    lexicographicSortSchema(gatewaySchema()),
  )}\n`;
