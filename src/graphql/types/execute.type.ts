import { createUnionType, Field, Int, ObjectType, registerEnumType } from 'type-graphql';
import { ID } from '../scalars/id.scalar';
import type { ExecuteResponse } from '../../domain/execute-response';
import { FileRef } from './file-ref.type';
import { ToolCall, TurnUsage } from './turn.type';

/** GraphQL names -> the domain's AGN-033 kind values (the REST answer uses the latter). */
export const AgentExecuteKind = { FINAL: 'final', CLIENT_TOOL_CONTINUATION: 'client_tool_continuation' } as const;
registerEnumType(AgentExecuteKind, { name: 'AgentExecuteKind' });

/** AGN-033 5.2. resultJson / errorMessage are resolved from the domain's outcome union. */
@ObjectType()
export class ToolResult {
  @Field(() => ID) toolCallId!: string;
  @Field(() => Int) executionMs!: number;
}

@ObjectType({ description: 'Kind FINAL. Buckets forbidden for this kind do not exist on the type (AGN-033 3.4).', simpleResolvers: true })
export class AgentFinalResponse {
  @Field(() => AgentExecuteKind) kind!: string;
  @Field(() => ID) sessionId!: string;
  @Field(() => ID) turnId!: string;
  @Field(() => String) modeDisplayName!: string;
  @Field(() => String) primaryOutputText!: string;
  @Field(() => [FileRef], { nullable: true }) files!: FileRef[] | null;
  @Field(() => [ToolResult], { nullable: true }) toolResults!: ToolResult[] | null;
  @Field(() => [String], { nullable: true }) userWarnings!: string[] | null;
  @Field(() => TurnUsage, { nullable: true }) usage!: TurnUsage | null;
}

@ObjectType({
  description: 'Kind CLIENT_TOOL_CONTINUATION: the client must run toolCalls and send back exactly matching toolResults.',
  simpleResolvers: true,
})
export class AgentToolContinuation {
  @Field(() => AgentExecuteKind) kind!: string;
  @Field(() => ID) sessionId!: string;
  @Field(() => ID) turnId!: string;
  @Field(() => String) modeDisplayName!: string;
  @Field(() => [ToolCall]) toolCalls!: ToolCall[];
  @Field(() => String, { nullable: true }) toolContinuationMessage!: string | null;
}

export const AgentExecuteResponse = createUnionType({
  name: 'AgentExecuteResponse',
  types: () => [AgentFinalResponse, AgentToolContinuation] as const,
  resolveType: (value) => ((value as unknown as ExecuteResponse).kind === 'final' ? 'AgentFinalResponse' : 'AgentToolContinuation'),
});

@ObjectType({ description: 'Returned by executeAsync: the turn exists and is PENDING; follow it with subscriptions.', simpleResolvers: true })
export class AgentExecuteAccepted {
  @Field(() => ID) sessionId!: string;
  @Field(() => ID) turnId!: string;
  @Field(() => Int) sequenceNumber!: number;
}
