import { Field, Float, InputType } from 'type-graphql';
import { ID } from '../scalars/id.scalar';

@InputType()
export class AgentContextInput {
  @Field(() => ID, { nullable: true }) id?: string | null;
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => String) vectorCollection!: string;
  @Field(() => String) defaultModel!: string;
}

@InputType()
export class ToolDefinitionInput {
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => String) parametersJson!: string;
}

@InputType()
export class ConversationContextInput {
  @Field(() => ID, { nullable: true }) id?: string | null;
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => String) systemPrompt!: string;
  @Field(() => String, { nullable: true }) model?: string | null;
  @Field(() => Float, { nullable: true }) temperature?: number | null;
  @Field(() => [ToolDefinitionInput], { nullable: true }) tools?: ToolDefinitionInput[] | null;
}
