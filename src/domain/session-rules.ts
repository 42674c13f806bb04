import type { Caller } from './caller';
import { DomainError } from './errors';
import type { NewSession, SessionPatch, SessionRecord } from './session';
import { LIMITS, optionalText, requireText } from './validation';

/** DD-002A: a new session, owned by its creator, with no turns yet. Bad input is refused before anything is written. */
export function openSession(caller: Caller, input: NewSession, at: { readonly id: string; readonly now: Date }): SessionRecord {
  return {
    id: at.id,
    name: requireText('name', input.name, LIMITS.name),
    key: optionalText('key', input.key, LIMITS.key),
    description: optionalText('description', input.description, LIMITS.description),
    isPublic: input.isPublic ?? false,
    isDraft: input.isDraft ?? false,
    isDeleted: false,
    category: optionalText('category', input.category, LIMITS.category),
    ownerOrganization: { id: caller.orgId, text: caller.orgName },
    ownerUser: { id: caller.userId, text: caller.userName },
    creationDate: at.now,
    lastUpdatedDate: at.now,
    agentContextId: requireText('agentContextId', input.agentContextId, LIMITS.id),
    conversationContextId: optionalText('conversationContextId', input.conversationContextId, LIMITS.id),
    workspaceId: optionalText('workspaceId', input.workspaceId, LIMITS.shortText),
    repo: optionalText('repo', input.repo, LIMITS.shortText),
    defaultLanguage: optionalText('defaultLanguage', input.defaultLanguage, 64),
    turnCount: 0,
    lastTurnStatus: null,
    lastTurnDate: null,
    usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, cachedInputTokens: 0, estimatedCostUsd: null, isEstimated: false },
  };
}

/** The fields a patch changes, checked; a field left out stays as it is, and name and isPublic cannot be cleared. */
export type SessionChanges = Partial<Pick<SessionRecord, 'name' | 'description' | 'category' | 'isPublic'>>;

export function checkSessionPatch(patch: SessionPatch): SessionChanges {
  const changes: { -readonly [K in keyof SessionChanges]: SessionChanges[K] } = {};
  if (patch.name !== undefined) {
    if (patch.name === null) throw new DomainError('BAD_USER_INPUT', 'name cannot be null', { field: 'name' });
    changes.name = requireText('name', patch.name, LIMITS.name);
  }
  if (patch.description !== undefined) changes.description = optionalText('description', patch.description, LIMITS.description);
  if (patch.category !== undefined) changes.category = optionalText('category', patch.category, LIMITS.category);
  if (patch.isPublic !== undefined) {
    if (patch.isPublic === null) throw new DomainError('BAD_USER_INPUT', 'isPublic cannot be null', { field: 'isPublic' });
    changes.isPublic = patch.isPublic;
  }
  return changes;
}
