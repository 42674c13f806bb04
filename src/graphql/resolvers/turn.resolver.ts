import { Arg, Ctx, FieldResolver, Query, Resolver, Root } from 'type-graphql';
import { ID } from '../scalars/id.scalar';
import { notFound } from '../../domain/errors';
import type { SessionRecord } from '../../domain/session';
import type { TurnRecord } from '../../domain/turn';
import type { GraphQLContext } from '../context';
import { AgentSession } from '../types/session.type';
import { AgentSessionTurn } from '../types/turn.type';

@Resolver(() => AgentSessionTurn)
export class TurnResolver {
  @Query(() => AgentSessionTurn, { nullable: true, description: 'TurnId is only valid inside its session (AGN-033 3.1).' })
  agentSessionTurn(
    @Ctx() { caller, services }: GraphQLContext,
    @Arg('sessionId', () => ID) sessionId: string,
    @Arg('turnId', () => ID) turnId: string,
  ): Promise<TurnRecord | null> {
    return services.sessions.getTurn(caller, sessionId, turnId);
  }

  @Query(() => AgentSessionTurn, { nullable: true })
  lastAgentSessionTurn(
    @Ctx() { caller, services }: GraphQLContext,
    @Arg('sessionId', () => ID) sessionId: string,
  ): Promise<TurnRecord | null> {
    return services.sessions.getLastTurn(caller, sessionId);
  }

  @FieldResolver(() => AgentSession)
  async session(@Root() turn: TurnRecord, @Ctx() { loaders }: GraphQLContext): Promise<SessionRecord> {
    const session = await loaders.session.load(turn.sessionId);
    // Only reachable if the session vanished from the caller's view mid-request.
    if (!session) throw notFound('session');
    return session;
  }
}
