import { Field, InterfaceType } from 'type-graphql';
import { ID } from '../scalars/id.scalar';

/** The object types that implement Node: every type whose id `node(id:)` resolves. */
export const NODE_TYPES = ['AgentSession', 'AgentSessionTurn', 'AgentContext', 'ConversationContext', 'WebhookEndpoint', 'WebhookDelivery'] as const;
export type NodeTypeName = (typeof NODE_TYPES)[number];

/** A record as `node`/`nodes` return it: tagged with its type, since records are plain objects. */
export type NodeValue<R extends object = object> = R & { readonly __typename: NodeTypeName };

/**
 * Relay's object identification. A node's id is the id the API has always handed out (they
 * are minted by the gateway, unique in their table and never reused across tables), so
 * ids, cache keys and arguments stay as they were; `node(id:)` finds which type it is.
 */
@InterfaceType({
  description: 'An object with a global id: `node(id:)` fetches it again.',
  resolveType: (value: NodeValue) => value.__typename,
})
export abstract class Node {
  @Field(() => ID) id!: string;
}
