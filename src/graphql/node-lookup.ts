import type { Caller } from '../domain/caller';
import type { Services } from './services';
import type { NodeTypeName, NodeValue } from './types/node.type';

type Finder = (caller: Caller, services: Services, ids: readonly string[]) => Promise<readonly { readonly id: string }[]>;

/**
 * Where each Node type's ids are looked up, each restricted to what the caller may read: the
 * sessions and turns of sessions they may see, their org's contexts, and (admins only) their
 * org's webhook endpoints and deliveries. An id found nowhere, or only where the caller may not
 * look, is simply absent: `node` answers null alike, so nothing tells another org's id from
 * one that never existed. Ids are unique in their table and minted by the gateway, so at most
 * one table holds one; should two ever do, this order decides.
 */
const FINDERS: readonly (readonly [NodeTypeName, Finder])[] = [
  ['AgentSession', (caller, s, ids) => s.sessionBatches.sessionsByIds(caller, ids)],
  ['AgentSessionTurn', (caller, s, ids) => s.sessionBatches.turnsByIds(caller, ids)],
  ['AgentContext', (caller, s, ids) => s.contexts.agentContextsByIds(caller.orgId, ids)],
  ['ConversationContext', (caller, s, ids) => s.contexts.conversationContextsByIds(caller.orgId, ids)],
  ['WebhookEndpoint', (caller, s, ids) => s.webhooks.endpointsByIds(caller, ids)],
  ['WebhookDelivery', (caller, s, ids) => s.webhooks.deliveriesByIds(caller, ids)],
];

/** One statement per Node type for the whole batch; the records come back tagged with their type. */
export async function findNodes(caller: Caller, services: Services, ids: readonly string[]): Promise<(NodeValue | null)[]> {
  const found = await Promise.all(FINDERS.map(([, find]) => find(caller, services, ids)));
  const byId = new Map<string, NodeValue>();
  FINDERS.forEach(([typename], i) => {
    for (const record of found[i] ?? []) if (!byId.has(record.id)) byId.set(record.id, { ...record, __typename: typename });
  });
  return ids.map((id) => byId.get(id) ?? null);
}
