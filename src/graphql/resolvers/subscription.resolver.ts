import { Arg, Ctx, FieldResolver, Resolver, Root, Subscription, type SubscribeResolverData } from 'type-graphql';
import { ID } from '../scalars/id.scalar';
import { notFound } from '../../domain/errors';
import type { SessionFilter, SessionRecord } from '../../domain/session';
import type { TurnRecord } from '../../domain/turn';
import type { TurnStatusEvent } from '../../events/turn-events';
import type { TurnOutputDelta as TurnOutputDeltaRecord } from '../../events/turn-output.port';
import type { GraphQLContext } from '../context';
import { AgentSessionFilter } from '../inputs/session.input';
import { sessionActivitySource, turnOutputSource, turnStatusSource } from '../live/sources';
import { AgentSessionSummary } from '../types/session.type';
import { TurnOutputDelta, TurnStatusChangedEvent } from '../types/live.type';
import { AgentSessionTurn } from '../types/turn.type';

type Subscribe<A> = SubscribeResolverData<unknown, A, GraphQLContext>;

/**
 * The contract's subscriptions. `subscribe` checks access and builds the event source;
 * the field itself only hands the event on. Which events a subscriber gets, when they are
 * re-authorised and how executions are shared is the live layer's job (graphql/live).
 */
@Resolver(() => TurnStatusChangedEvent)
export class SubscriptionResolver {
  @Subscription(() => TurnStatusChangedEvent, {
    description: 'Every status change of every turn of one session the caller may read.',
    subscribe: ({ args, context }: Subscribe<{ sessionId: string; afterEventId?: string | null }>) =>
      turnStatusSource(context, args.sessionId, args.afterEventId ?? null),
  })
  turnStatusChanged(
    @Root() event: TurnStatusEvent,
    @Arg('sessionId', () => ID) _sessionId: string,
    @Arg('afterEventId', () => ID, { nullable: true }) _afterEventId: string | null,
  ): TurnStatusEvent {
    return event;
  }

  @Subscription(() => TurnStatusChangedEvent, {
    description: 'Org-wide feed for dashboards (admins see the org; others see only sessions they may read).',
    subscribe: ({ args, context }: Subscribe<{ filter?: SessionFilter | null; afterEventId?: string | null }>) =>
      sessionActivitySource(context, args.filter ?? {}, args.afterEventId ?? null),
  })
  sessionActivity(
    @Root() event: TurnStatusEvent,
    @Arg('filter', () => AgentSessionFilter, { nullable: true }) _filter: AgentSessionFilter | null,
    @Arg('afterEventId', () => ID, { nullable: true }) _afterEventId: string | null,
  ): TurnStatusEvent {
    return event;
  }

  @Subscription(() => TurnOutputDelta, {
    description:
      'Answer text as the LLM streams it; the stream completes when the turn leaves PENDING.\nA subscriber that joins late first receives the text already produced (from index 0).',
    subscribe: ({ args, context }: Subscribe<{ sessionId: string; turnId: string }>) =>
      turnOutputSource(context, args.sessionId, args.turnId),
  })
  turnOutput(
    @Root() delta: TurnOutputDeltaRecord,
    @Arg('sessionId', () => ID) _sessionId: string,
    @Arg('turnId', () => ID) _turnId: string,
  ): TurnOutputDeltaRecord {
    return delta;
  }

  @FieldResolver(() => AgentSessionTurn, {
    description:
      'The turn as it is when the event is delivered (DataLoader-batched). On an event replayed from afterEventId that can be later than the change: status, previousStatus and statusTimeStamp are the change itself, as stored when it happened.',
  })
  async turn(@Root() event: TurnStatusEvent, @Ctx() { loaders }: GraphQLContext): Promise<TurnRecord> {
    const turn = await loaders.turn.load(event.turnId);
    if (!turn) throw notFound('turn');
    return turn;
  }

  @FieldResolver(() => AgentSessionSummary)
  async session(@Root() event: TurnStatusEvent, @Ctx() { loaders }: GraphQLContext): Promise<SessionRecord> {
    const session = await loaders.session.load(event.sessionId);
    if (!session) throw notFound('session');
    return session;
  }
}
