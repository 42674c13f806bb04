import { Arg, Ctx, Mutation, Resolver } from 'type-graphql';
import { ID } from '../scalars/id.scalar';
import type { SessionRecord } from '../../domain/session';
import type { GraphQLContext } from '../context';
import { AgentSessionPatch } from '../inputs/session.input';
import { AgentSession } from '../types/session.type';

@Resolver()
export class SessionMutationResolver {
  @Mutation(() => AgentSession)
  updateAgentSession(
    @Ctx() { caller, services }: GraphQLContext,
    @Arg('id', () => ID) id: string,
    @Arg('patch', () => AgentSessionPatch) patch: AgentSessionPatch,
  ): Promise<SessionRecord> {
    return services.sessionCommands.updateSession(caller, id, patch);
  }

  @Mutation(() => Boolean, { description: 'Soft delete (isDeleted = true).' })
  deleteAgentSession(@Ctx() { caller, services }: GraphQLContext, @Arg('id', () => ID) id: string): Promise<boolean> {
    return services.sessionCommands.deleteSession(caller, id);
  }
}
