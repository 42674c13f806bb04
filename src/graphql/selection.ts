import { Kind, type FieldNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/**
 * Whether the operation selects `field` directly on the value this resolver returns
 * (through fragments too), so work the field needs can start with the resolver's own.
 * A field skipped by @skip/@include still counts: it only starts the work early.
 */
export function selectsField(info: GraphQLResolveInfo, field: string): boolean {
  return selectsAny(info, [], [field]);
}

/**
 * Whether the operation selects any of `fields` on the value found at `path` below this
 * resolver's (e.g. ['edges', 'node'] of a connection), through fragments and aliases, so a
 * resolver can read what those fields need with its own statement. Like selectsField,
 * @skip/@include are ignored: the answer errs towards reading.
 */
export function selectsAny(info: GraphQLResolveInfo, path: readonly string[], fields: readonly string[]): boolean {
  let sets = info.fieldNodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : []));
  for (const step of path) {
    sets = sets.flatMap((set) => fieldsOf(set, info).filter((f) => f.name.value === step && f.selectionSet).map((f) => f.selectionSet as SelectionSetNode));
  }
  return sets.some((set) => fieldsOf(set, info).some((f) => fields.includes(f.name.value)));
}

/** The fields of a selection set, those of its fragments included. */
function fieldsOf(set: SelectionSetNode, info: GraphQLResolveInfo, seen = new Set<string>(), out: FieldNode[] = []): FieldNode[] {
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      out.push(selection);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      fieldsOf(selection.selectionSet, info, seen, out);
    } else {
      const name = selection.name.value;
      const fragment = info.fragments[name];
      if (seen.has(name) || !fragment) continue;
      seen.add(name);
      fieldsOf(fragment.selectionSet, info, seen, out);
    }
  }
  return out;
}
