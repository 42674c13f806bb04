import { FieldResolver, Resolver, Root } from 'type-graphql';
import type { SkippedSnippet } from '../../domain/request-metadata';
import type { TurnRecord } from '../../domain/turn';
import { AgentSessionSkippedSnippet, AgentSessionTurn } from '../types/turn.type';

/** The request metadata stored with a turn (spec 001 section 10.2), as flat turn fields. */
@Resolver(() => AgentSessionTurn)
export class TurnRequestFieldsResolver {
  @FieldResolver(() => [String], {
    nullable: true,
    description: 'Path prefixes retrieval was restricted to (request-only scope); null when it searched everything.',
  })
  retrievalPathPrefixes(@Root() turn: TurnRecord): readonly string[] | null {
    return turn.requestMetadata.retrievalPathPrefixes;
  }

  @FieldResolver(() => [AgentSessionSkippedSnippet], { description: 'Retrieved snippets recorded but not sent to the model, and why.' })
  skippedSnippets(@Root() turn: TurnRecord): readonly SkippedSnippet[] {
    return turn.requestMetadata.skippedSnippets;
  }
}
