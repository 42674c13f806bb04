import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/**
 * Whether the operation selects `field` directly on the value this resolver returns
 * (through fragments too), so work the field needs can start with the resolver's own.
 * A field skipped by @skip/@include still counts: it only starts the work early.
 */
export function selectsField(info: GraphQLResolveInfo, field: string): boolean {
  return info.fieldNodes.some((node) => node.selectionSet !== undefined && inSet(node.selectionSet, field, info, new Set()));
}

function inSet(set: SelectionSetNode, field: string, info: GraphQLResolveInfo, seen: Set<string>): boolean {
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value === field) return true;
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      if (inSet(selection.selectionSet, field, info, seen)) return true;
    } else {
      const name = selection.name.value;
      const fragment = info.fragments[name];
      if (seen.has(name) || !fragment) continue;
      seen.add(name);
      if (inSet(fragment.selectionSet, field, info, seen)) return true;
    }
  }
  return false;
}
