import { Kind, type GraphQLResolveInfo } from 'graphql';
import { badInput } from '../domain/errors';
import type { ListPageRequest } from '../domain/pagination';

/**
 * Relay's paging arguments, parsed once: `first`/`after` forward or `last`/`before` backward.
 * `first` has a default in the schema, so whether the client wrote it is read from the
 * operation; one page goes one way, so mixing the two is refused rather than guessed at.
 */
export function pageRequestOf(
  info: GraphQLResolveInfo,
  args: { first: number | null; after: string | null; last: number | null; before: string | null },
  defaultFirst: number,
): ListPageRequest {
  if (args.last === null && args.before === null) return { first: args.first ?? defaultFirst, after: args.after };
  if (args.after !== null || given(info, 'first')) {
    throw badInput('page forward (first/after) or backward (last/before), not both', { argument: args.after !== null ? 'after' : 'first' });
  }
  return { last: args.last ?? defaultFirst, before: args.before };
}

/** Whether the operation sets the argument itself (a literal, or a variable with a value). */
function given(info: GraphQLResolveInfo, name: string): boolean {
  const arg = info.fieldNodes[0]?.arguments?.find((a) => a.name.value === name);
  if (!arg) return false;
  return arg.value.kind !== Kind.VARIABLE || info.variableValues[arg.value.name.value] !== undefined;
}
