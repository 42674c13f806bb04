import 'reflect-metadata';
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchemaSync } from 'type-graphql';
import { SessionConnectionResolver, TurnConnectionResolver } from './resolvers/connection.resolver';
import { ContextResolver } from './resolvers/context.resolver';
import { ProvenanceResolver } from './resolvers/provenance.resolver';
import {
  SessionFieldsResolver,
  SessionSharedFieldsResolver,
  SummarySharedFieldsResolver,
} from './resolvers/session-fields.resolver';
import { SessionMutationResolver } from './resolvers/session-mutation.resolver';
import { SessionQueryResolver } from './resolvers/session-query.resolver';
import { TurnResolver } from './resolvers/turn.resolver';
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
  ContextResolver,
  ProvenanceResolver,
] as const;

let built: GraphQLSchema | null = null;

/** The executable schema; type-graphql's metadata is global, so it is built once per process. */
export function gatewaySchema(): GraphQLSchema {
  built ??= buildSchemaSync({ resolvers: [...resolvers], validate: false });
  return built;
}

/** The SDL committed as schema/schema.graphql. */
export const printGatewaySchema = (): string =>
  `# Emitted from the code-first schema by \`npm run schema:emit\`. Do not edit by hand.\n\n${printSchema(
    lexicographicSortSchema(gatewaySchema()),
  )}\n`;
