import { Field, Int, ObjectType } from 'type-graphql';
import { ID } from '../scalars/id.scalar';
import type { TurnStatus } from '../../domain/turn-status';
import { EntityHeader } from './common.type';
import { AgentSessionTurnStatus } from './enums';
import { ToolCallRecord } from './turn.type';

@ObjectType({ simpleResolvers: true })
export class TurnStatusChangedEvent {
  @Field(() => ID, { description: 'Durable, strictly increasing within the org (each org has its own sequence); pass it back as afterEventId to resume.' })
  eventId!: number;
  @Field(() => ID) sessionId!: string;
  @Field(() => ID) turnId!: string;
  @Field(() => Int) sequenceNumber!: number;
  @Field(() => AgentSessionTurnStatus, { nullable: true }) previousStatus!: TurnStatus | null;
  @Field(() => AgentSessionTurnStatus) status!: TurnStatus;
  @Field(() => Date) statusTimeStamp!: Date;
  @Field(() => EntityHeader) createdByUser!: EntityHeader;
}

@ObjectType({ simpleResolvers: true })
export class TurnOutputDelta {
  @Field(() => ID) sessionId!: string;
  @Field(() => ID) turnId!: string;
  @Field(() => Int, { description: '0-based, gap-free per turn, so a client can detect loss.' }) index!: number;
  @Field(() => String, { description: 'A piece of answer text; empty on a tool call item.' }) textDelta!: string;
  @Field(() => ToolCallRecord, {
    nullable: true,
    description: 'Set on tool call items: a tool call as it starts (RUNNING, WAITING_FOR_CLIENT) and as it ends (spec 004 section 7).',
  })
  toolCall?: ToolCallRecord | null;
}
