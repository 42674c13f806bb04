import { Field, InputType, Int, registerEnumType } from 'type-graphql';
import { ID } from '../scalars/id.scalar';
import {
  CLIENT_KINDS,
  type ActiveFileFields,
  type ClientKind as ClientKindValue,
  type ExecuteInputFields,
  type ToolResultFields,
} from '../../orchestrator/request-handler';

export const ClientKind = Object.fromEntries(CLIENT_KINDS.map((k) => [k, k])) as { [K in ClientKindValue]: K };
registerEnumType(ClientKind, { name: 'ClientKind' });

@InputType()
export class ActiveFileInput implements ActiveFileFields {
  @Field(() => String) path!: string;
  @Field(() => String, { nullable: true, description: "Full current content. Omit to say 'unchanged since last turn' together with contentHash." })
  content?: string | null;
  @Field(() => String, { nullable: true }) contentHash?: string | null;
  @Field(() => Boolean, { nullable: true, defaultValue: true }) isTouched?: boolean | null;
  @Field(() => Int, {
    nullable: true,
    description: 'Size in bytes (UTF-8). With contentHash and no content, a file over 100 KB is recorded as skipped and never uploaded.',
  })
  sizeBytes?: number | null;
}

@InputType()
export class ToolResultInput implements ToolResultFields {
  @Field(() => ID) toolCallId!: string;
  @Field(() => Int) executionMs!: number;
  @Field(() => String, { nullable: true }) resultJson?: string | null;
  @Field(() => String, { nullable: true }) errorMessage?: string | null;
}

@InputType()
export class AgentExecuteInput implements ExecuteInputFields {
  @Field(() => ID, { nullable: true, description: 'Omit to start a new session.' }) sessionId?: string | null;
  @Field(() => ID, {
    nullable: true,
    description:
      'AGN-033 follow-on rule. With toolResults: the PENDING turn that asked for them. With an instruction: the session\'s latest finished turn, which the new turn follows (TURN_NOT_LATEST otherwise).',
  })
  turnId?: string | null;
  @Field(() => ID) agentContextId!: string;
  @Field(() => ID, { nullable: true }) conversationContextId?: string | null;
  @Field(() => String, { nullable: true }) instruction?: string | null;
  @Field(() => String, { nullable: true, defaultValue: 'ask' }) mode?: string | null;
  @Field(() => ClientKind, { nullable: true, defaultValue: 'BROWSER' }) clientKind?: ClientKindValue | null;
  @Field(() => String, { nullable: true }) workspaceId?: string | null;
  @Field(() => String, { nullable: true }) repo?: string | null;
  @Field(() => String, { nullable: true }) language?: string | null;
  @Field(() => String, { nullable: true }) sessionName?: string | null;
  @Field(() => [ActiveFileInput], { nullable: true }) activeFiles?: ActiveFileInput[] | null;
  @Field(() => [ToolResultInput], { nullable: true }) toolResults?: ToolResultInput[] | null;
  @Field(() => String, { nullable: true, description: "A retried call with the same key returns the first call's result and creates no second turn." })
  idempotencyKey?: string | null;
  @Field(() => [String], {
    nullable: true,
    description: 'Restricts retrieval to these workspace path prefixes (whole segments), e.g. ["ui/primitives"]. Request-only: stored with the turn, never in the vector store.',
  })
  retrievalPathPrefixes?: string[] | null;
}
