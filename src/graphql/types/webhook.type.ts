import { Field, Int, ObjectType, registerEnumType } from 'type-graphql';
import { ID } from '../scalars/id.scalar';
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_EVENT_TYPES, type WebhookDeliveryStatus as DeliveryStatus, type WebhookEventType as EventType } from '../../webhooks/webhook-rules';
import { PageInfo } from './common.type';
import { Node } from './node.type';

const enumOf = <T extends string>(values: readonly T[]) => Object.fromEntries(values.map((v) => [v, v])) as { [K in T]: K };

export const WebhookEventType = enumOf<EventType>(WEBHOOK_EVENT_TYPES);
registerEnumType(WebhookEventType, {
  name: 'WebhookEventType',
  valuesConfig: {
    TURN_COMPLETED: { description: 'A turn completed.' },
    TURN_FAILED: { description: 'A turn failed.' },
    TURN_CANCELLED: { description: 'A turn was cancelled.' },
    TURN_AWAITING_TOOL_RESULTS: { description: 'A turn waits for the results of client tools (AGN-033 continuation).' },
    SESSION_CREATED: { description: 'A session was created (by an execute, or by forkAgentSession).' },
  },
});

export const WebhookDeliveryStatus = enumOf<DeliveryStatus>(WEBHOOK_DELIVERY_STATUSES);
registerEnumType(WebhookDeliveryStatus, {
  name: 'WebhookDeliveryStatus',
  valuesConfig: {
    PENDING: { description: 'Not delivered yet; attempted again at nextAttemptAt.' },
    SUCCEEDED: { description: 'The receiver answered 2xx.' },
    FAILED: { description: 'No attempt is made again (last retry spent, a 4xx, a refused address, or 410 Gone); redeliverWebhook sends it again.' },
  },
});

@ObjectType({ implements: Node, simpleResolvers: true, description: 'A receiver of the organisation\'s webhooks (Standard Webhooks).' })
export class WebhookEndpoint extends Node {
  @Field(() => String) url!: string;
  @Field(() => [WebhookEventType]) events!: EventType[];
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => Boolean) enabled!: boolean;
  @Field(() => String, { nullable: true, description: 'Why the gateway disabled it (the receiver answered 410 Gone); null otherwise.' })
  disabledReason!: string | null;
  @Field(() => Date) createdAt!: Date;
}

@ObjectType({ simpleResolvers: true })
export class WebhookEndpointWithSecret {
  @Field(() => WebhookEndpoint) endpoint!: WebhookEndpoint;
  @Field(() => String, { description: 'The signing secret (whsec_…), shown only here: store it now.' })
  secret!: string;
}

@ObjectType({ simpleResolvers: true })
export class WebhookAttempt {
  @Field(() => Date) at!: Date;
  @Field(() => Int, { nullable: true, description: "The receiver's HTTP status; null when none arrived (timeout, connection error, refused address)." })
  statusCode!: number | null;
  @Field(() => Int) durationMs!: number;
  @Field(() => String, { nullable: true }) error!: string | null;
}

@ObjectType({ implements: Node, simpleResolvers: true })
export class WebhookDelivery {
  @Field(() => ID) id!: string;
  @Field(() => String, { description: 'The webhook-id header: the same on every attempt at this event.' }) webhookId!: string;
  @Field(() => WebhookEventType) eventType!: EventType;
  @Field(() => WebhookDeliveryStatus) status!: DeliveryStatus;
  @Field(() => [WebhookAttempt], { description: 'Oldest first (the newest 50).' }) attempts!: WebhookAttempt[];
  @Field(() => Date, { nullable: true }) nextAttemptAt!: Date | null;
  @Field(() => ID, { nullable: true }) sessionId!: string | null;
  @Field(() => ID, { nullable: true }) turnId!: string | null;
  @Field(() => Date) createdAt!: Date;
}

@ObjectType({ simpleResolvers: true })
export class WebhookDeliveryEdge {
  @Field(() => String) cursor!: string;
  @Field(() => WebhookDelivery) node!: WebhookDelivery;
}

@ObjectType({ simpleResolvers: true })
export class WebhookDeliveryConnection {
  @Field(() => [WebhookDeliveryEdge]) edges!: WebhookDeliveryEdge[];
  @Field(() => PageInfo) pageInfo!: PageInfo;
}
