import { Arg, Ctx, Int, Query, Resolver } from 'type-graphql';
import { ID } from '../scalars/id.scalar';
import type { TurnRecord } from '../../domain/turn';
import { toConnection, type ConnectionSource } from '../connections';
import type { GraphQLContext } from '../context';
import { AgentSessionTurnConnection } from '../types/turn.type';

/** "Which answers were built on this code?" Turns the caller may read, newest first. */
@Resolver()
export class ProvenanceResolver {
  @Query(() => AgentSessionTurnConnection, {
    description: 'Turns whose retrieval returned this chunk (a vector point id), newest first.',
  })
  async turnsUsingChunk(
    @Ctx() { caller, services }: GraphQLContext,
    @Arg('chunkId', () => ID) chunkId: string,
    @Arg('first', () => Int, { nullable: true, defaultValue: 25 }) first: number | null,
    @Arg('after', () => String, { nullable: true }) after: string | null,
  ): Promise<ConnectionSource<TurnRecord>> {
    const page = await services.provenance.turnsUsingChunk(caller, chunkId, { first: first ?? 25, after: after ?? null });
    return toConnection(page, page.totalCount);
  }

  @Query(() => AgentSessionTurnConnection, {
    description:
      'Turns that used the file version with this SHA-256: as an active file, or through a retrieved chunk cut from it. Newest first.',
  })
  async turnsUsingFile(
    @Ctx() { caller, services }: GraphQLContext,
    @Arg('contentHash', () => String) contentHash: string,
    @Arg('first', () => Int, { nullable: true, defaultValue: 25 }) first: number | null,
    @Arg('after', () => String, { nullable: true }) after: string | null,
  ): Promise<ConnectionSource<TurnRecord>> {
    const page = await services.provenance.turnsUsingFile(caller, contentHash, { first: first ?? 25, after: after ?? null });
    return toConnection(page, page.totalCount);
  }
}
