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
