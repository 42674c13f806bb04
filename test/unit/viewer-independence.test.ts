import 'reflect-metadata';
import { getNamedType, isInterfaceType, isObjectType, isUnionType, parse, type GraphQLNamedType } from 'graphql';
import { DEPENDS_ON_VIEWER, SAME_FOR_EVERY_READER, sameForEveryReader } from '../../src/graphql/live/viewer-independence';
import { gatewaySchema } from '../../src/graphql/schema';

const schema = gatewaySchema();

/** Every object type's fields reachable from the subscriptions, as "Type.field". */
function reachableFields(): string[] {
  const fields: string[] = [];
  const seen = new Set<string>();
  const queue: GraphQLNamedType[] = [schema.getSubscriptionType()!];
  while (queue.length > 0) {
    const type = queue.pop()!;
    if (seen.has(type.name)) continue;
    seen.add(type.name);
    if (isUnionType(type)) queue.push(...type.getTypes());
    if (isInterfaceType(type)) queue.push(...schema.getPossibleTypes(type));
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        fields.push(`${type.name}.${field.name}`);
        queue.push(getNamedType(field.type));
      }
    }
  }
  return fields;
}

const listed = (table: Readonly<Record<string, readonly string[]>>) => new Set(Object.entries(table).flatMap(([type, names]) => names.map((n) => `${type}.${n}`)));

describe('which subscription selections are the same for every reader (issue 35.8)', () => {
  it('classifies every field reachable from the subscriptions, so a new one is decided on, not shared by default', () => {
    const shared = listed(SAME_FOR_EVERY_READER);
    const perViewer = listed(DEPENDS_ON_VIEWER);
    const unclassified = reachableFields().filter((f) => !shared.has(f) && !perViewer.has(f));
    expect(unclassified).toEqual([]);
    expect([...shared].filter((f) => perViewer.has(f))).toEqual([]);
  });

  it('shares a selection of the session and turn, not one that lists forks or a fork origin', () => {
    const verdict = (query: string) => sameForEveryReader(schema, parse(query), null);
    expect(verdict('subscription { turnStatusChanged(sessionId: "s") { eventId turn { id status } session { name participants { id } } } }')).toBe(true);
    expect(verdict('subscription { turnStatusChanged(sessionId: "s") { turn { session { forks { totalCount } } } } }')).toBe(false);
    expect(verdict('subscription { sessionActivity { ...F } } fragment F on TurnStatusChangedEvent { session { id } turn { inheritedFrom { session { id } } } }')).toBe(false);
  });
});
