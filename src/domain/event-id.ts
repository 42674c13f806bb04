import { badInput } from './errors';

/**
 * Status-event ids are positive integers handed out in commit order (turn_events). Clients
 * see them as GraphQL IDs; `afterEventId` comes back as a string and is parsed here once.
 * 0 means "from the very beginning of the retained history".
 */
export function parseEventId(raw: string, argument = 'afterEventId'): number {
  if (!/^(0|[1-9][0-9]{0,15})$/.test(raw)) throw badInput(`${argument} must be an event id (a non-negative integer)`, { argument });
  const id = Number(raw);
  if (!Number.isSafeInteger(id)) throw badInput(`${argument} is out of range`, { argument });
  return id;
}
