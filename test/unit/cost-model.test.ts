import { getNullableType, isListType, isObjectType, parse } from 'graphql';
import { DEFAULT_MAX_COST } from '../../src/config';
import * as costModel from '../../src/graphql/cost';
import { ARGUMENT_SIZED_LISTS, costVariables, costVerdict, LIST_SIZES, operationCost } from '../../src/graphql/cost';
import { createProtection } from '../../src/graphql/protection';
import { gatewaySchema } from '../../src/graphql/schema';

const schema = gatewaySchema();
const cost = (query: string, variables: Record<string, unknown> = {}, operationName?: string) =>
  operationCost(schema, parse(query), operationName, variables);
/** The refusal, or null when the operation may run (within the limit, or left to execution). */
const checkCost = (...args: Parameters<typeof costVerdict>) => {
  const verdict = costVerdict(...args);
  return verdict.kind === 'refused' ? verdict.error : null;
};

describe('the cost model', () => {
  // agentSession 1 + turns (1 + page × edges (1 + (1 + node (1 + id 1)))) = 2 + 4 × page
  const turnsPage = 'query T($id: ID!, $n: Int) { agentSession(id: $id) { turns(first: $n) { edges { node { id } } } } }';

  it('reads the page size from a literal, a variable, or the schema default', () => {
    expect(cost('{ agentSession(id: "s") { turns(first: 10) { edges { node { id } } } } }')).toBe(42);
    expect(cost(turnsPage, { id: 's', n: 10 })).toBe(42);
    // turns(first: Int = 50): left out, or explicitly null.
    expect(cost(turnsPage, { id: 's' })).toBe(202);
    expect(cost(turnsPage, { id: 's', n: null })).toBe(202);
    expect(cost('query Q($n: Int = 7) { agentSession(id: "s") { turns(first: $n) { edges { node { id } } } } }')).toBe(30);
    // agentSessions(first: Int = 25): 1 + 25 × (edges 1 + (1 + node (1 + id 1)))
    expect(cost('{ agentSessions { edges { node { id } } } }')).toBe(101);
    // A backward page: `last` sizes it (first's default is still counted: an overestimate of 25 at most).
    expect(cost('{ agentSessions(last: 100) { edges { node { id } } } }')).toBe(401);
  });

  it('caps the page at the largest page a resolver serves (it refuses larger ones itself)', () => {
    expect(cost(turnsPage, { id: 's', n: 100 })).toBe(402);
    expect(cost(turnsPage, { id: 's', n: 1_000_000 })).toBe(402);
  });

  it('multiplies nested lists', () => {
    const nested = `{ agentSession(id: "s") { turns(first: 10) { edges { node { session { turns(first: 10) { edges { node { id } } } } } } } } }`;
    // inner turns 41, session 42, node 43, edges 45, outer turns 1 + 10 × 45
    expect(cost(nested)).toBe(452);
    // participants: 1 + 10 × (1 + id + text); under a page of 10 summaries
    expect(cost('{ agentSession(id: "s") { participants { id text } } }')).toBe(32);
    expect(cost('{ agentSessions(first: 10) { edges { node { participants { id text } } } } }')).toBe(1 + 10 * (1 + 1 + 1 + 31));
    // A list of scalars: 1 + its assumed size.
    expect(cost('{ me { roles } }')).toBe(1 + 1 + LIST_SIZES['Viewer.roles']!);
  });

  it('prices nodes(ids:) by the ids it is given', () => {
    // nodes 1 + 3 × (1 + (id 1 + __typename 1))
    expect(cost('{ nodes(ids: ["a", "b", "c"]) { id __typename } }')).toBe(1 + 3 * 3);
    expect(cost('query N($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids: ['a'] })).toBe(1 + 2);
  });

  it('counts fragments where they are spread, and only the operation that runs', () => {
    const withFragment = `query A { agentSession(id: "s") { ...F } } query B { me { roles } }
      fragment F on AgentSession { turns(first: 10) { edges { node { id } } } }`;
    expect(cost(withFragment, {}, 'A')).toBe(42);
    expect(cost(withFragment, {}, 'B')).toBe(7);
  });

  it('knows the size of every list field without paging arguments, and of no field that is not one', () => {
    const lists: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith('__')) continue;
      for (const field of Object.values(type.getFields())) {
        if (isListType(getNullableType(field.type)) && !field.args.some((a) => a.name === 'first')) lists.push(`${type.name}.${field.name}`);
      }
    }
    expect(Object.keys(LIST_SIZES).sort()).toEqual(lists.filter((l) => !(l in ARGUMENT_SIZED_LISTS)).sort());
    expect(Object.keys(ARGUMENT_SIZED_LISTS).every((l) => lists.includes(l))).toBe(true);
  });

  it('refuses over the limit with the cost and the limit in the message', () => {
    const error = checkCost(schema, 401, parse(turnsPage), undefined, { id: 's', n: 100 });
    expect(error?.message).toBe('Query cost 402 exceeds the limit of 401: ask for smaller pages (first) or fewer nested lists');
    expect(error?.extensions).toEqual({ code: 'GRAPHQL_VALIDATION_FAILED', cost: 402, maxCost: 401 });
    expect(checkCost(schema, 402, parse(turnsPage), undefined, { id: 's', n: 100 })).toBeNull();
  });

  it('leaves operations it cannot identify, or whose variables do not coerce, to execution (which refuses them)', () => {
    expect(checkCost(schema, 1, parse(turnsPage), undefined, { n: 100 })).toBeNull();
    expect(checkCost(schema, 1, parse('query A { me { roles } } query B { me { roles } }'), undefined, {})).toBeNull();
  });

  it('refuses a document whose fragments expand without end, quickly', () => {
    // Each fragment spreads the next twice: 2^20 expansions of a 24-fragment document.
    const fragments = Array.from({ length: 24 }, (_, i) =>
      i === 23 ? `fragment F${i} on Query { me { roles } }` : `fragment F${i} on Query { ...F${i + 1} a${i}: me { roles } ...F${i + 1} }`,
    ).join('\n');
    const started = Date.now();
    const error = checkCost(schema, DEFAULT_MAX_COST, parse(`{ ...F0 }\n${fragments}`), undefined, {});
    expect(error?.message).toMatch(/too complex to estimate/);
    expect(error?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    // Not a timing assertion of the suite's speed: an unbounded walk would take minutes.
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});

describe('remembered cost verdicts', () => {
  const limits = { maxDepth: 12, maxAliases: 30, maxTokens: 2_000, maxCost: 402, maxResponseItems: 10_000, maxDirectives: 20, bodyLimitBytes: 1 << 20 };
  const turnsPage = 'query T($id: ID!, $n: Int, $big: Boolean!) { agentSession(id: $id) { id turns(first: $n) @include(if: $big) { edges { node { id } } } } }';

  afterEach(() => jest.restoreAllMocks());

  it('knows which variables can change an estimate: page sizes and directives, not the rest', () => {
    expect([...costVariables(parse(turnsPage))].sort()).toEqual(['big', 'n']);
    const execute = 'mutation($input: AgentExecuteInput!) { execute(input: $input) { ... on AgentFinalResponse { turnId } } }';
    expect([...costVariables(parse(execute))]).toEqual([]);
    expect([...costVariables(parse('query($a: Int) { agentSessions(last: $a) { totalCount } }'))]).toEqual(['a']);
  });

  it('answers each page size and directive value by its own verdict', () => {
    const { checkCost: check } = createProtection(limits, true, schema);
    const document = parse(turnsPage);
    expect(check(document, undefined, { id: 's', n: 10, big: true })).toBeNull();
    expect(check(document, undefined, { id: 's', n: 100, big: true })?.extensions?.cost).toBe(403);
    expect(check(document, undefined, { id: 's', n: 100, big: false })).toBeNull();
    expect(check(document, undefined, { id: 'other', n: 100, big: true })?.extensions?.cost).toBe(403);
    expect(check(document, undefined, { id: 's', n: 10, big: true })).toBeNull();
    // Left out, $n is null: the schema default of 50 applies; sent as 100 it is not.
    const defaulted = parse('query T($n: Int = 100) { agentSession(id: "s") { id turns(first: $n) { edges { node { id } } } } }');
    expect(check(defaulted, undefined, {})?.extensions?.cost).toBe(403);
    expect(check(defaulted, undefined, { n: null })).toBeNull();
    expect(check(defaulted, undefined, {})?.extensions?.cost).toBe(403);
  });

  it('estimates a document once while only variables the cost ignores change', () => {
    const estimate = jest.spyOn(costModel, 'costVerdict');
    const { checkCost: check } = createProtection(limits, true, schema);
    const document = parse(turnsPage);
    for (const id of ['a', 'b', 'c']) expect(check(document, undefined, { id, n: 100, big: true })?.extensions?.cost).toBe(403);
    expect(estimate).toHaveBeenCalledTimes(1);
  });

  it('does not let variables that failed to coerce decide for later ones', () => {
    const { checkCost: check } = createProtection(limits, true, schema);
    const document = parse(turnsPage);
    // $id missing: not estimated (execution refuses it); the same page with $id is still priced.
    expect(check(document, undefined, { n: 100, big: true })).toBeNull();
    expect(check(document, undefined, { id: 's', n: 100, big: true })?.extensions?.cost).toBe(403);
  });
});
