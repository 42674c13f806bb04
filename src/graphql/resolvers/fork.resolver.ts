import { Arg, Ctx, FieldResolver, Int, Mutation, Resolver, Root } from 'type-graphql';
import { ID } from '../scalars/id.scalar';
import type { SessionRecord } from '../../domain/session';
import type { ForkOrigin } from '../../domain/session-fork';
import type { TurnRecord } from '../../domain/turn';
import type { TurnUsage as TurnUsageRecord } from '../../domain/usage';
import type { SessionSummaryRecord } from '../../sessions/session-store.port';
import { toConnection, type ConnectionSource } from '../connections';
import type { GraphQLContext } from '../context';
import { SessionForkOrigin } from '../types/fork.type';
import { AgentSession, AgentSessionSummaryConnection } from '../types/session.type';
import { AgentSessionTurn, TurnUsage } from '../types/turn.type';

@Resolver()
export class ForkMutationResolver {
  @Mutation(() => AgentSession, {
    description:
      "A new session of the caller's holding copies of the session's turns up to and including turnId (a finished turn), with their summaries, payload URLs and usage (inherited: not counted again). Its next execute continues turnId's provider conversation, or preloads a new one from the copies. Only readers of the session may fork it; the caller is the fork's only participant.",
  })
  forkAgentSession(
    @Ctx() { caller, services }: GraphQLContext,
    @Arg('sessionId', () => ID) sessionId: string,
    @Arg('turnId', () => ID) turnId: string,
    @Arg('name', () => String, { nullable: true }) name: string | null,
  ): Promise<SessionRecord> {
    return services.forks.fork(caller, sessionId, turnId, name ?? null);
  }
}

@Resolver(() => AgentSession)
export class SessionForkFieldsResolver {
  @FieldResolver(() => SessionForkOrigin, { nullable: true, description: 'The session and turn this session was forked at; null unless it is a fork.' })
  async forkedFrom(@Root() s: SessionRecord, @Ctx() { loaders }: GraphQLContext): Promise<ForkOrigin | null> {
    return loaders.forkOrigin.load(s.id);
  }

  @FieldResolver(() => TurnUsage, {
    nullable: true,
    description: "A fork's copied turns' usage, charged to the turns they copy (not part of `usage`, which sums the turns run in this session); null unless it is a fork.",
  })
  async inheritedUsage(@Root() s: SessionRecord, @Ctx() { loaders }: GraphQLContext): Promise<TurnUsageRecord | null> {
    return (await loaders.forkOrigin.load(s.id))?.inheritedUsage ?? null;
  }

  @FieldResolver(() => AgentSessionSummaryConnection, { description: 'Sessions forked from this one that the caller may read, newest first.' })
  async forks(
    @Root() s: SessionRecord,
    @Ctx() { caller, services }: GraphQLContext,
    @Arg('first', () => Int, { nullable: true, defaultValue: 25 }) first: number | null,
    @Arg('after', () => String, { nullable: true }) after: string | null,
  ): Promise<ConnectionSource<SessionSummaryRecord>> {
    const page = await services.forkLineage.forksOf(caller, s.id, { first: first ?? 25, after });
    return toConnection(page, page.totalCount);
  }
}

@Resolver(() => AgentSessionTurn)
export class TurnForkFieldsResolver {
  @FieldResolver(() => SessionForkOrigin, {
    nullable: true,
    description: 'For a turn a fork copied: the session and turn it is a copy of (its usage was charged there). Null for a turn run in this session.',
  })
  inheritedFrom(@Root() t: TurnRecord, @Ctx() { loaders }: GraphQLContext): Promise<ForkOrigin | null> {
    return loaders.turnOrigin.load(t.id);
  }
}

@Resolver(() => SessionForkOrigin)
export class SessionForkOriginResolver {
  @FieldResolver(() => AgentSession, { nullable: true, description: 'Null when the caller may not read it (any more).' })
  session(@Root() origin: ForkOrigin, @Ctx() { loaders }: GraphQLContext): Promise<SessionRecord | null> {
    return loaders.session.load(origin.sessionId);
  }

  @FieldResolver(() => AgentSessionTurn, { nullable: true, description: 'Null when the caller may not read it (any more).' })
  turn(@Root() origin: ForkOrigin, @Ctx() { loaders }: GraphQLContext): Promise<TurnRecord | null> {
    return loaders.turn.load(origin.turnId);
  }
}
