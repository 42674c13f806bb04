import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { AgentContextRecord, ConversationContextRecord } from '../../domain/contexts';
import type { GraphQLContext } from '../context';
import { AgentContextInput, ConversationContextInput } from '../inputs/context.input';
import { AgentContext, ConversationContext } from '../types/context.type';

@Resolver()
export class ContextResolver {
  @Query(() => [AgentContext])
  agentContexts(@Ctx() { caller, services }: GraphQLContext): Promise<AgentContextRecord[]> {
    return services.contexts.listAgentContexts(caller.orgId);
  }

  @Query(() => [ConversationContext])
  conversationContexts(@Ctx() { caller, services }: GraphQLContext): Promise<ConversationContextRecord[]> {
    return services.contexts.listConversationContexts(caller.orgId);
  }

  @Mutation(() => AgentContext, { description: 'Admin only.' })
  upsertAgentContext(
    @Ctx() { caller, services }: GraphQLContext,
    @Arg('input', () => AgentContextInput) input: AgentContextInput,
  ): Promise<AgentContextRecord> {
    return services.contexts.upsertAgentContext(caller, input);
  }

  @Mutation(() => ConversationContext, { description: 'Admin only.' })
  upsertConversationContext(
    @Ctx() { caller, services }: GraphQLContext,
    @Arg('input', () => ConversationContextInput) input: ConversationContextInput,
  ): Promise<ConversationContextRecord> {
    return services.contexts.upsertConversationContext(caller, input);
  }
}
