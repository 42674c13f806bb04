import { Ctx, Query, Resolver } from 'type-graphql';
import { orgHeader, userHeader } from '../../domain/caller';
import type { GraphQLContext } from '../context';
import { Viewer } from '../types/common.type';

@Resolver()
export class ViewerResolver {
  @Query(() => Viewer)
  me(@Ctx() { caller }: GraphQLContext): Viewer {
    return { user: userHeader(caller), organization: orgHeader(caller), roles: [...caller.roles] };
  }
}
