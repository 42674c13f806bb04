import { Arg, Ctx, Int, Mutation, Query, Resolver } from 'type-graphql';
import { ID } from '../scalars/id.scalar';
import type { WebhookDeliveryRecord, WebhookEndpointRecord, WebhookEndpointWithSecret as WithSecret } from '../../webhooks/webhook-endpoints';
import type { PageInfoSource } from '../connections';
import type { GraphQLContext } from '../context';
import { WebhookEndpointInput } from '../inputs/webhook.input';
import { WebhookDelivery, WebhookDeliveryConnection, WebhookEndpoint, WebhookEndpointWithSecret } from '../types/webhook.type';

interface DeliveryPage {
  readonly edges: { node: WebhookDeliveryRecord; cursor: string }[];
  readonly pageInfo: PageInfoSource;
}

/** Webhook endpoints of the caller's organisation: its admins only (FORBIDDEN for everyone else). */
@Resolver()
export class WebhookResolver {
  @Query(() => [WebhookEndpoint])
  webhookEndpoints(@Ctx() { caller, services }: GraphQLContext): Promise<WebhookEndpointRecord[]> {
    return services.webhooks.list(caller);
  }

  @Query(() => WebhookDeliveryConnection, { description: "An endpoint's deliveries, newest first." })
  async webhookDeliveries(
    @Ctx() { caller, services }: GraphQLContext,
    @Arg('endpointId', () => ID) endpointId: string,
    @Arg('first', () => Int, { nullable: true, defaultValue: 25 }) first: number | null,
    @Arg('after', () => String, { nullable: true }) after: string | null,
  ): Promise<DeliveryPage> {
    const page = await services.webhooks.deliveries(caller, endpointId, { first: first ?? 25, after });
    const edges = page.items.map((node) => ({ node, cursor: page.cursorOf(node) }));
    const pageInfo = { hasNextPage: page.hasNextPage, hasPreviousPage: false, startCursor: edges.at(0)?.cursor ?? null, endCursor: edges.at(-1)?.cursor ?? null };
    return { edges, pageInfo };
  }

  @Mutation(() => WebhookEndpointWithSecret, { description: 'The secret is shown in this answer only.' })
  createWebhookEndpoint(
    @Ctx() { caller, services }: GraphQLContext,
    @Arg('input', () => WebhookEndpointInput) input: WebhookEndpointInput,
  ): Promise<WithSecret> {
    return services.webhooks.create(caller, input);
  }

  @Mutation(() => WebhookEndpoint)
  updateWebhookEndpoint(
    @Ctx() { caller, services }: GraphQLContext,
    @Arg('id', () => ID) id: string,
    @Arg('input', () => WebhookEndpointInput) input: WebhookEndpointInput,
    @Arg('enabled', () => Boolean, { nullable: true }) enabled: boolean | null,
  ): Promise<WebhookEndpointRecord> {
    return services.webhooks.update(caller, id, input, enabled ?? null);
  }

  @Mutation(() => WebhookEndpointWithSecret, { description: 'A new secret; the previous one keeps signing beside it for 24 hours.' })
  rotateWebhookSecret(@Ctx() { caller, services }: GraphQLContext, @Arg('id', () => ID) id: string): Promise<WithSecret> {
    return services.webhooks.rotateSecret(caller, id);
  }

  @Mutation(() => ID)
  deleteWebhookEndpoint(@Ctx() { caller, services }: GraphQLContext, @Arg('id', () => ID) id: string): Promise<string> {
    return services.webhooks.delete(caller, id);
  }

  @Mutation(() => WebhookDelivery, { description: 'Sends a delivery again now, with the same webhook-id and a new retry window.' })
  redeliverWebhook(@Ctx() { caller, services }: GraphQLContext, @Arg('deliveryId', () => ID) deliveryId: string): Promise<WebhookDeliveryRecord> {
    return services.webhooks.redeliver(caller, deliveryId);
  }
}
