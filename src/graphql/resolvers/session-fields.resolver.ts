import { Arg, Ctx, FieldResolver, Int, Resolver, Root, type ClassType } from 'type-graphql';
import type { EntityHeader } from '../../domain/caller';
import type { AgentContextRecord, ConversationContextRecord } from '../../domain/contexts';
import { assertPageSize, decodeCursor, encodeCursor, malformedCursor } from '../../domain/pagination';
import type { SessionRecord } from '../../domain/session';
import type { TurnRecord } from '../../domain/turn';
import type { SessionSummaryRecord } from '../../sessions/session-store.port';
import type { TurnStatus } from '../../domain/turn-status';
import { toConnection, type ConnectionSource } from '../connections';
import type { GraphQLContext } from '../context';
import { EntityHeader as EntityHeaderType } from '../types/common.type';
import { AgentContext, ConversationContext } from '../types/context.type';
import { AgentSessionTurnStatus } from '../types/enums';
import { AgentSession, AgentSessionSummary } from '../types/session.type';
import { AgentSessionTurn, AgentSessionTurnConnection } from '../types/turn.type';

/** A session, or a list's summary of one: what the shared fields read, both have. */
type SessionLike = SessionRecord | SessionSummaryRecord;

/**
 * Fields that a session and its summary both resolve through the request's loaders
 * (DD-007 names, the last turn, participants). One definition serves both types. A list
 * reads the context names with its page when they are selected (SessionSummaryRecord), so
 * its names need no loader (schema.ts answers them from the record).
 */
function sharedSessionFields(type: ClassType) {
  @Resolver(() => type)
  class SharedSessionFields {
    // A summary that carries the names read with its page is answered before this runs (schema.ts).
    @FieldResolver(() => String, { nullable: true })
    agentContextName(@Root() s: SessionLike, @Ctx() { loaders }: GraphQLContext): Promise<string | null> {
      return loaders.agentContext.load(s.agentContextId).then((c) => c?.name ?? null);
    }

    @FieldResolver(() => String, { nullable: true })
    conversationContextName(
      @Root() s: SessionLike,
      @Ctx() { loaders }: GraphQLContext,
    ): string | null | Promise<string | null> {
      if (!s.conversationContextId) return null;
      return loaders.conversationContext.load(s.conversationContextId).then((c) => c?.name ?? null);
    }

    @FieldResolver(() => AgentContext, { nullable: true })
    agentContext(@Root() s: SessionLike, @Ctx() { loaders }: GraphQLContext): Promise<AgentContextRecord | null> {
      return loaders.agentContext.load(s.agentContextId);
    }

    @FieldResolver(() => ConversationContext, { nullable: true })
    async conversationContext(
      @Root() s: SessionLike,
      @Ctx() { loaders }: GraphQLContext,
    ): Promise<ConversationContextRecord | null> {
      return s.conversationContextId ? loaders.conversationContext.load(s.conversationContextId) : null;
    }

    @FieldResolver(() => AgentSessionTurn, { nullable: true })
    lastTurn(@Root() s: SessionLike, @Ctx() { loaders }: GraphQLContext): Promise<TurnRecord | null> | null {
      return s.turnCount === 0 ? null : loaders.lastTurn.load(s);
    }

    @FieldResolver(() => [EntityHeaderType], { description: 'Owner plus every user who created a turn in the session.' })
    participants(@Root() s: SessionLike, @Ctx() { loaders }: GraphQLContext): Promise<EntityHeader[]> {
      return loaders.participants.load(s.id);
    }
  }
  return SharedSessionFields;
}

export const SessionSharedFieldsResolver = sharedSessionFields(AgentSession);
export const SummarySharedFieldsResolver = sharedSessionFields(AgentSessionSummary);

const TURN_CURSOR = 'TURN';

@Resolver(() => AgentSession)
export class SessionFieldsResolver {
  @FieldResolver(() => AgentSessionTurnConnection, { description: 'Ordered by sequenceNumber ascending. Forward pagination.' })
  async turns(
    @Root() s: SessionRecord,
    @Ctx() { loaders }: GraphQLContext,
    @Arg('first', () => Int, { nullable: true, defaultValue: 50 }) first: number | null,
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Arg('status', () => AgentSessionTurnStatus, { nullable: true }) status: TurnStatus | null,
  ): Promise<ConnectionSource<TurnRecord>> {
    const limit = assertPageSize(first ?? 50);
    const afterSequence = after ? sequenceFromCursor(after) : 0;
    const rows = await loaders.turns.load({ sessionId: s.id, afterSequence, limit: limit + 1, status: status ?? null });
    const items = rows.slice(0, limit);
    const page = {
      items,
      cursorOf: (t: TurnRecord) => encodeCursor(TURN_CURSOR, { key: t.sequenceNumber, id: t.id }),
      hasNextPage: rows.length > limit,
    };
    const count = status
      ? () => loaders.turnCountByStatus.load({ sessionId: s.id, status })
      : () => Promise.resolve(s.turnCount);
    return toConnection(page, count);
  }

  @FieldResolver(() => AgentSessionSummary)
  summary(@Root() s: SessionRecord): SessionRecord {
    return s;
  }
}

function sequenceFromCursor(cursor: string): number {
  const { key } = decodeCursor(TURN_CURSOR, cursor);
  if (typeof key !== 'number' || !Number.isInteger(key) || key < 0) throw malformedCursor();
  return key;
}
