import { Field, InputType } from 'type-graphql';
import type { WebhookEventType as EventType } from '../../webhooks/webhook-rules';
import { WebhookEventType } from '../types/webhook.type';

@InputType()
export class WebhookEndpointInput {
  @Field(() => String, { description: 'https:// (http:// for localhost outside production).' }) url!: string;
  @Field(() => [WebhookEventType]) events!: EventType[];
  @Field(() => String, { nullable: true }) description?: string | null;
}
