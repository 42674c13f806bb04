import { Field, Int, ObjectType } from 'type-graphql';
import { ID } from '../scalars/id.scalar';
import type { TurnStatus } from '../../domain/turn-status';
import { EntityHeader, PageInfo } from './common.type';
import { Node } from './node.type';
import { AgentSessionTurnStatus } from './enums';
import { TurnUsage } from './turn.type';

/**
 * Fields a session and its list-view summary share. Context names, last turn, participants
 * and turns are not stored fields: they are resolved in session-fields.resolver.ts.
 */
@ObjectType('SessionCore')
abstract class SessionCore {
  @Field(() => ID) id!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) key!: string | null;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => Boolean) isPublic!: boolean;
  @Field(() => String, { nullable: true }) category!: string | null;
  @Field(() => Date) lastUpdatedDate!: Date;
  @Field(() => EntityHeader) ownerUser!: EntityHeader;
  @Field(() => ID) agentContextId!: string;
  @Field(() => ID, { nullable: true }) conversationContextId!: string | null;
  @Field(() => Int) turnCount!: number;
}

@ObjectType({ implements: Node, simpleResolvers: true })
export class AgentSession extends SessionCore {
  @Field(() => Boolean) isDraft!: boolean;
  @Field(() => Boolean) isDeleted!: boolean;
  @Field(() => EntityHeader) ownerOrganization!: EntityHeader;
  @Field(() => Date) creationDate!: Date;
  @Field(() => String, { nullable: true }) workspaceId!: string | null;
  @Field(() => String, { nullable: true }) repo!: string | null;
  @Field(() => String, { nullable: true }) defaultLanguage!: string | null;
  @Field(() => TurnUsage, { description: "Sum over the turns run in this session (a fork's copied turns are in inheritedUsage instead)." }) usage!: TurnUsage;
}

@ObjectType({ description: 'List-view projection of a session (spec DD-003 / DD-007).', simpleResolvers: true })
export class AgentSessionSummary extends SessionCore {
  @Field(() => AgentSessionTurnStatus, { nullable: true }) lastTurnStatus!: TurnStatus | null;
  @Field(() => Date, { nullable: true }) lastTurnDate!: Date | null;
}

@ObjectType({ simpleResolvers: true })
export class AgentSessionSummaryEdge {
  @Field(() => String) cursor!: string;
  @Field(() => AgentSessionSummary) node!: AgentSessionSummary;
}

@ObjectType()
export class AgentSessionSummaryConnection {
  @Field(() => [AgentSessionSummaryEdge]) edges!: AgentSessionSummaryEdge[];
  @Field(() => PageInfo) pageInfo!: PageInfo;
  @Field(() => Int) totalCount!: number;
  @Field(() => Boolean, {
    description: 'True when totalCount stopped at its cap (10,000; 100 for a search) and more sessions match: it is a lower bound (show "10,000+").',
  })
  totalCountIsLowerBound!: boolean;
}
