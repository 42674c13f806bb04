/**
 * The bearer value a graphql-ws client put in `connection_init`, as clients spell it:
 * `{ authorization }` with the key in any case (`Authorization`, as Apollo and urql examples
 * write it), or `{ headers: { authorization } }` (also any case). Two keys that differ only
 * in case but carry different values are ambiguous and give nothing (the socket is refused).
 */
export function authorizationOf(params: Readonly<Record<string, unknown>> | undefined | null): unknown {
  if (!params || typeof params !== 'object') return undefined;
  const top = keyIgnoringCase(params, 'authorization');
  if (top !== undefined) return top;
  const headers = keyIgnoringCase(params, 'headers');
  if (!headers || typeof headers !== 'object' || Array.isArray(headers)) return undefined;
  return keyIgnoringCase(headers as Readonly<Record<string, unknown>>, 'authorization');
}

const AMBIGUOUS = Symbol('ambiguous');

function keyIgnoringCase(record: Readonly<Record<string, unknown>>, wanted: string): unknown {
  let found: unknown = undefined;
  for (const [key, value] of Object.entries(record)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    if (found !== undefined && found !== value) found = AMBIGUOUS;
    else if (found !== AMBIGUOUS) found = value;
  }
  return found === AMBIGUOUS ? null : found;
}
