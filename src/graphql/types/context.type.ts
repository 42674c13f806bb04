import { Field, Float, ObjectType } from 'type-graphql';
import { ID } from '../scalars/id.scalar';
import { Node } from './node.type';

@ObjectType({ implements: Node, description: 'Which vector collection and LLM environment a session uses.', simpleResolvers: true })
export class AgentContext {
  @Field(() => ID) id!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => String) vectorCollection!: string;
  @Field(() => String) defaultModel!: string;
}

@ObjectType({ simpleResolvers: true })
export class ToolDefinition {
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => String, { description: 'JSON Schema of the arguments, as a JSON string.' }) parametersJson!: string;
}

@ObjectType({ implements: Node, description: 'System prompt, model, temperature and client tools of a conversation.', simpleResolvers: true })
export class ConversationContext {
  @Field(() => ID) id!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => String) systemPrompt!: string;
  @Field(() => String, { nullable: true }) model!: string | null;
  @Field(() => Float, { nullable: true }) temperature!: number | null;
  @Field(() => [ToolDefinition], {
    description: 'Tools the CLIENT executes (AGN-033 continuation). The server may add built-in server tools.',
  })
  tools!: ToolDefinition[];
}
