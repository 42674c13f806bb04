import { Ctx, Query, Resolver } from 'type-graphql';
import { ID } from '../scalars/id.scalar';
import type { GraphQLContext } from '../context';

@Resolver()
export class EventCursorResolver {
  @Query(() => ID, {
    description:
      'The newest status-event id handed out so far in the caller\'s org (ids are per org). Read it before loading a list, then subscribe with it as afterEventId: nothing that changes after this query is missed.',
  })
  async latestEventId(@Ctx() { caller, services }: GraphQLContext): Promise<string> {
    return String(await services.live.history.latestId(caller.orgId));
  }
}
