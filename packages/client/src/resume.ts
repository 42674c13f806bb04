import { Kind, OperationTypeNode, type DocumentNode, type FieldNode, type OperationDefinitionNode } from 'graphql';

/**
 * How a subscription picks up after a reconnect, read from its document:
 * - `event-id`: its root field takes `afterEventId: $var` and selects `eventId` (turnStatusChanged,
 *   sessionActivity). Re-subscribe with the last id seen; the server replays what came after it.
 * - `index`: its root field selects `index` and takes no cursor (turnOutput). The server sends the
 *   text again from index 0 on every subscribe; deltas already delivered are dropped.
 * - `none`: nothing to resume from; re-subscribing only continues live.
 */
export type ResumePlan =
  | { readonly kind: 'event-id'; readonly field: string; readonly variable: string }
  | { readonly kind: 'index'; readonly field: string }
  | { readonly kind: 'none' };

export function resumePlanOf(document: DocumentNode): ResumePlan {
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (!operation || operation.operation !== OperationTypeNode.SUBSCRIPTION) throw new Error('not a subscription document');
  const root = operation.selectionSet.selections.find((s): s is FieldNode => s.kind === Kind.FIELD);
  if (!root) return { kind: 'none' };
  const field = root.alias?.value ?? root.name.value;
  const selects = (name: string) => root.selectionSet?.selections.some((s) => s.kind === Kind.FIELD && !s.alias && s.name.value === name) ?? false;
  const cursor = root.arguments?.find((a) => a.name.value === 'afterEventId');
  if (cursor) {
    if (cursor.value.kind !== Kind.VARIABLE) throw new Error(`${field}: pass afterEventId as a variable so the client can resume`);
    if (!selects('eventId')) throw new Error(`${field}: select eventId so the client can resume`);
    return { kind: 'event-id', field, variable: cursor.value.name.value };
  }
  return selects('index') ? { kind: 'index', field } : { kind: 'none' };
}

/** Orders event ids (decimal strings of any length) without losing precision. */
export function compareEventIds(a: string, b: string): number {
  return a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Where one subscription stands: the variables for its next subscribe, and which incoming
 * results are new. Accepting nothing twice and nothing out of order is what makes a resumed
 * subscription look, to its caller, like one that never dropped.
 */
export class ResumePoint {
  private lastEventId: string | null;
  private lastIndex = -1;

  constructor(
    readonly plan: ResumePlan,
    private readonly initial: Record<string, unknown>,
  ) {
    const given = plan.kind === 'event-id' ? initial[plan.variable] : null;
    this.lastEventId = typeof given === 'string' || typeof given === 'number' ? String(given) : null;
  }

  /** An event-id subscription without a starting id must be given one before it is sent. */
  get needsStart(): boolean {
    return this.plan.kind === 'event-id' && this.lastEventId === null;
  }

  startAt(eventId: string): void {
    this.lastEventId ??= eventId;
  }

  variables(): Record<string, unknown> {
    if (this.plan.kind !== 'event-id' || this.lastEventId === null) return this.initial;
    return { ...this.initial, [this.plan.variable]: this.lastEventId };
  }

  /** True when `data` is new and moves the resume point on; false for a repeat. */
  accept(data: Record<string, unknown>): boolean {
    const plan = this.plan;
    if (plan.kind === 'none') return true;
    const payload = data[plan.field] as Record<string, unknown> | null | undefined;
    if (plan.kind === 'event-id') {
      const id = payload?.eventId;
      if (typeof id !== 'string') return true;
      if (this.lastEventId !== null && compareEventIds(id, this.lastEventId) <= 0) return false;
      this.lastEventId = id;
      return true;
    }
    const index = payload?.index;
    if (typeof index !== 'number') return true;
    if (index <= this.lastIndex) return false;
    this.lastIndex = index;
    return true;
  }
}
