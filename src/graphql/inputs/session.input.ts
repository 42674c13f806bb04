import { Field, InputType } from 'type-graphql';
import { ID } from '../scalars/id.scalar';
import type { TurnStatus } from '../../domain/turn-status';
import { AgentSessionTurnStatus } from '../types/enums';

@InputType()
export class AgentSessionFilter {
  @Field(() => ID, {
    nullable: true,
    description: 'Sessions owned by this user OR in which this user created any turn (spec DD-003).',
  })
  participantId?: string | null;
  @Field(() => ID, { nullable: true }) ownerUserId?: string | null;
  @Field(() => ID, { nullable: true }) agentContextId?: string | null;
  @Field(() => ID, { nullable: true }) conversationContextId?: string | null;
  @Field(() => String, { nullable: true }) workspaceId?: string | null;
  @Field(() => String, { nullable: true }) repo?: string | null;
  @Field(() => AgentSessionTurnStatus, { nullable: true }) lastTurnStatus?: TurnStatus | null;
  @Field(() => Date, { nullable: true }) updatedAfter?: Date | null;
  @Field(() => Date, { nullable: true }) updatedBefore?: Date | null;
  @Field(() => String, { nullable: true, description: 'Case-insensitive substring of the session name.' })
  search?: string | null;
  @Field(() => Boolean, { nullable: true, defaultValue: false, description: 'Admins only; others get FORBIDDEN.' })
  includeDeleted?: boolean | null;
}

@InputType()
export class AgentSessionPatch {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => Boolean, { nullable: true }) isPublic?: boolean | null;
  @Field(() => String, { nullable: true }) category?: string | null;
}
