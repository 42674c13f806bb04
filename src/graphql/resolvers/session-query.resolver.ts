import type { FieldNode, GraphQLResolveInfo } from 'graphql';
import { Arg, Ctx, Info, Int, Query, Resolver } from 'type-graphql';
import { ID } from '../scalars/id.scalar';
import type { SessionOrder } from '../../domain/session';
import type { SessionRecord } from '../../domain/session';
import type { ListOptions, SessionSummaryRecord } from '../../sessions/session-store.port';
import { toConnection, type ConnectionSource } from '../connections';
import type { GraphQLContext } from '../context';
import { pageRequestOf } from '../page-args';
import { selectsAny, selectsField } from '../selection';
import { AgentSessionFilter } from '../inputs/session.input';
import { AgentSessionOrder } from '../types/enums';
import { AgentSession, AgentSessionSummaryConnection } from '../types/session.type';

@Resolver()
export class SessionQueryResolver {
  @Query(() => AgentSession, { nullable: true })
  agentSession(@Arg('id', () => ID) id: string, @Ctx() { caller, services }: GraphQLContext): Promise<SessionRecord | null> {
    return services.sessions.getSession(caller, id);
  }

  @Query(() => AgentSessionSummaryConnection)
  async agentSessions(
    @Ctx() { caller, services }: GraphQLContext,
    @Arg('filter', () => AgentSessionFilter, { nullable: true }) filter: AgentSessionFilter | null,
    @Arg('orderBy', () => AgentSessionOrder, { nullable: true, defaultValue: 'LAST_UPDATED_DESC' }) orderBy: SessionOrder | null,
    @Arg('first', () => Int, { nullable: true, defaultValue: 25 }) first: number | null,
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Arg('last', () => Int, { nullable: true }) last: number | null,
    @Arg('before', () => String, { nullable: true }) before: string | null,
    @Info() info: GraphQLResolveInfo,
  ): Promise<ConnectionSource<SessionSummaryRecord>> {
    const page = await services.sessions.listSessions(
      caller,
      filter ?? {},
      orderBy ?? 'LAST_UPDATED_DESC',
      pageRequestOf(info, { first, after: after ?? null, last: last ?? null, before: before ?? null }, 25),
      listOptions(info),
    );
    return toConnection(page, page.totalCount, page.countIsLowerBound);
  }

  @Query(() => AgentSessionSummaryConnection, {
    description: 'Spec DD-003 GetAgentSessionsForUserAsync: owner or participant.',
  })
  async agentSessionsForUser(
    @Ctx() { caller, services }: GraphQLContext,
    @Arg('userId', () => ID) userId: string,
    @Arg('first', () => Int, { nullable: true, defaultValue: 25 }) first: number | null,
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Arg('last', () => Int, { nullable: true }) last: number | null,
    @Arg('before', () => String, { nullable: true }) before: string | null,
    @Info() info: GraphQLResolveInfo,
  ): Promise<ConnectionSource<SessionSummaryRecord>> {
    const page = await services.sessions.listSessionsForUser(
      caller,
      userId,
      pageRequestOf(info, { first, after: after ?? null, last: last ?? null, before: before ?? null }, 25),
      listOptions(info),
    );
    return toConnection(page, page.totalCount, page.countIsLowerBound);
  }
}

/**
 * What the page should read besides the summaries, from what the operation selects. Apollo
 * hands out the same parsed document for the same query text, so the answer is kept per
 * field node (weakly: no longer than Apollo keeps the document) instead of walking the
 * selection on every request. (A fragment's node can be merged with different siblings in
 * two operations of one document; the options only decide what is read up front, and the
 * count and the names are still read on demand, so that costs a statement, never an answer.)
 */
const optionsByField = new WeakMap<FieldNode, ListOptions>();
function listOptions(info: GraphQLResolveInfo): ListOptions {
  const key = info.fieldNodes[0];
  const known = key && optionsByField.get(key);
  if (known) return known;
  const options: ListOptions = {
    withTotalCount: selectsField(info, 'totalCount'),
    withContextNames: selectsAny(info, ['edges', 'node'], ['agentContextName', 'conversationContextName']),
  };
  if (key) optionsByField.set(key, options);
  return options;
}
