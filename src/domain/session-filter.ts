import type { EntityHeader } from './caller';
import { matchesSearch, searchWords } from './search-words';
import type { SessionFilter, SessionRecord } from './session';

/**
 * The AgentSessionFilter rule for one session, as the live feed applies it to each event.
 * It states what sessions/session-query.ts `applyFilter` states in SQL for lists: every
 * field set must hold; participants include the owner; updatedAfter/Before are exclusive;
 * search is domain/search-words.ts's rule over name and description; deleted sessions only when asked for.
 * Visibility is not decided here: the caller's loaders only return sessions it may read.
 */
export function matchesSessionFilter(
  session: SessionRecord,
  participants: readonly EntityHeader[] | null,
  filter: SessionFilter,
): boolean {
  if (session.isDeleted && filter.includeDeleted !== true) return false;
  if (filter.participantId != null) {
    const isParticipant =
      session.ownerUser.id === filter.participantId || (participants ?? []).some((p) => p.id === filter.participantId);
    if (!isParticipant) return false;
  }
  if (filter.ownerUserId != null && session.ownerUser.id !== filter.ownerUserId) return false;
  if (filter.agentContextId != null && session.agentContextId !== filter.agentContextId) return false;
  if (filter.conversationContextId != null && session.conversationContextId !== filter.conversationContextId) return false;
  if (filter.workspaceId != null && session.workspaceId !== filter.workspaceId) return false;
  if (filter.repo != null && session.repo !== filter.repo) return false;
  if (filter.lastTurnStatus != null && session.lastTurnStatus !== filter.lastTurnStatus) return false;
  const updated = session.lastUpdatedDate.getTime();
  if (filter.updatedAfter != null && !(updated > filter.updatedAfter.getTime())) return false;
  if (filter.updatedBefore != null && !(updated < filter.updatedBefore.getTime())) return false;
  if (filter.search != null && filter.search !== '' && !matchesSearch(searchWords(filter.search), session.name, session.description)) {
    return false;
  }
  return true;
}

/** Whether the rule needs the session's participants (a second lookup per event). */
export const filterNeedsParticipants = (filter: SessionFilter): boolean => filter.participantId != null;

/**
 * A value the filter pins, as a key: a session can only match the filter if `sessionPins`
 * of that session includes it. Null when the filter pins nothing an index can use (only
 * dates, search, includeDeleted, lastTurnStatus: a status the session leaves moments later
 * is no key to decide by). The most selective pin wins; a participant last, since checking
 * it needs the session's participants read.
 */
export function filterPin(filter: SessionFilter): string | null {
  if (filter.ownerUserId != null) return pin('owner', filter.ownerUserId);
  if (filter.conversationContextId != null) return pin('conversationContext', filter.conversationContextId);
  if (filter.workspaceId != null) return pin('workspace', filter.workspaceId);
  if (filter.repo != null) return pin('repo', filter.repo);
  if (filter.agentContextId != null) return pin('agentContext', filter.agentContextId);
  if (filter.participantId != null) return pin('participant', filter.participantId);
  return null;
}

/** Whether a pin is about the session's participants (they must be read to list the session's pins). */
export const isParticipantPin = (key: string): boolean => key.startsWith(PARTICIPANT);

/** Every pin the session matches; participants' pins only when `participants` is given. */
export function sessionPins(session: SessionRecord, participants: readonly EntityHeader[] | null): string[] {
  const pins = [pin('owner', session.ownerUser.id), pin('agentContext', session.agentContextId)];
  if (session.conversationContextId !== null) pins.push(pin('conversationContext', session.conversationContextId));
  if (session.workspaceId !== null) pins.push(pin('workspace', session.workspaceId));
  if (session.repo !== null) pins.push(pin('repo', session.repo));
  if (participants) {
    // The owner takes part (matchesSessionFilter), listed or not.
    pins.push(pin('participant', session.ownerUser.id));
    for (const p of participants) pins.push(pin('participant', p.id));
  }
  return pins;
}

const PARTICIPANT = 'participant\0';
/** Field and value, NUL-separated: no value can pose as another field's. */
const pin = (field: string, value: string): string => `${field}\0${value}`;
