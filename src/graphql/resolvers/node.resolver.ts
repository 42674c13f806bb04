import { Arg, Ctx, Query, Resolver } from 'type-graphql';
import { badInput } from '../../domain/errors';
import { MAX_PAGE_SIZE } from '../../domain/pagination';
import type { GraphQLContext } from '../context';
import { ID } from '../scalars/id.scalar';
import { Node, type NodeValue } from '../types/node.type';

/** Relay's refetch entry points: any id the API hands out, as the caller may see it now. */
@Resolver()
export class NodeResolver {
  @Query(() => Node, { nullable: true, description: 'The object with this id, or null when there is none the caller may see.' })
  node(@Ctx() { loaders }: GraphQLContext, @Arg('id', () => ID) id: string): Promise<NodeValue | null> {
    return loaders.node.load(id);
  }

  @Query(() => [Node], {
    nullable: 'items',
    description: `The objects with these ids, in their order; null where there is none the caller may see. At most ${MAX_PAGE_SIZE} ids.`,
  })
  async nodes(@Ctx() { loaders }: GraphQLContext, @Arg('ids', () => [ID]) ids: string[]): Promise<(NodeValue | null)[]> {
    if (ids.length > MAX_PAGE_SIZE) throw badInput(`ids: at most ${MAX_PAGE_SIZE} ids at once, got ${ids.length}`, { field: 'ids' });
    const found = await loaders.node.loadMany(ids);
    const failed = found.find((n) => n instanceof Error);
    if (failed) throw failed;
    return found as (NodeValue | null)[];
  }
}
