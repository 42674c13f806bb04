import { subscribe, wsClient } from '../support/ws';
import { startGateway, type TestGateway } from '../support/testkit';
import { capturingLogger } from '../support/log-capture';

/** Requests graphql-js answers with a schema suggestion: a field, an enum value (literal and variable), an inline fragment. */
const SUGGESTION_BAIT: readonly (readonly [string, string, Record<string, unknown>])[] = [
  ['a misspelt field', '{ agentSesions { totalCount } }', {}],
  ['a misspelt enum value', '{ agentSessions(filter: { lastTurnStatus: PENDIN }) { totalCount } }', {}],
  ['a misspelt enum value in a variable', 'query Q($s: AgentSessionTurnStatus) { agentSessions(filter: { lastTurnStatus: $s }) { totalCount } }', { s: 'PENDIN' }],
  ['a union member field without a fragment', 'mutation { execute(input: { agentContextId: "ac" }) { primaryOutputText } }', {}],
];

const nested = (depth: number): string => (depth === 0 ? 'id' : `lastTurn { session { ${nested(depth - 1)} } }`);

describe('abuse limits and transport rules', () => {
  let t: TestGateway;
  let token: string;
  beforeAll(async () => {
    t = await startGateway();
    token = t.token({ userId: 'alice' });
  });
  afterAll(() => t.close());

  const firstError = async (query: string) => (await t.gql(token, query)).body.errors?.[0];

  it('accepts an ordinary query', async () => {
    expect((await t.gql(token, `{ agentSessions(first: 5) { edges { node { ${nested(2)} } } } }`)).body.errors).toBeUndefined();
  });

  it('refuses queries that are too deep', async () => {
    const error = await firstError(`{ agentSessions { edges { node { ${nested(6)} } } } }`);
    expect(error?.message).toMatch(/depth/i);
    expect(error?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('refuses too many aliases', async () => {
    const aliases = Array.from({ length: 20 }, (_, i) => `a${i}: me { roles }`).join(' ');
    expect((await firstError(`{ ${aliases} }`))?.message).toMatch(/aliases/i);
  });

  it('refuses documents with too many tokens, and documents that do not parse, as the client\'s error (400)', async () => {
    const fields = Array.from({ length: 2100 }, () => '__typename').join(' ');
    const long = await t.gql(token, `{ ${fields} }`);
    expect([long.status, long.body.errors?.[0]?.extensions?.code]).toEqual([400, 'GRAPHQL_PARSE_FAILED']);
    expect(long.body.errors?.[0]?.message).toMatch(/token/i);
    for (const broken of ['{ me { roles }', '{ agentSession(id: "x\\uZZZZ") { id } }']) {
      const res = await t.gql(token, broken);
      expect({ broken, status: res.status, code: res.body.errors?.[0]?.extensions?.code }).toEqual({ broken, status: 400, code: 'GRAPHQL_PARSE_FAILED' });
    }
  });

  it('refuses queries over the cost limit', async () => {
    const wide = Array.from({ length: 12 }, (_, i) => `s${i}: agentSessions(first: 100) { edges { node { participants { id text } lastTurn { id } } } }`).join(' ');
    const error = await firstError(`{ ${wide} }`);
    expect(error?.message).toMatch(/cost|aliases/i);
  });

  it('checks the limits and the caller on every request, whether or not the document was seen before', async () => {
    const deep = `{ agentSessions { edges { node { ${nested(6)} } } } }`;
    for (let i = 0; i < 2; i++) expect((await firstError(deep))?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const wide = `query Wide($n: Int) { ${Array.from({ length: 10 }, (_, i) => `s${i}: agentSessions(first: $n) { edges { node { participants { id text } lastTurn { id } } } }`).join(' ')} }`;
    for (let i = 0; i < 2; i++) {
      expect((await t.gql(token, wide, { n: 1 })).body.errors).toBeUndefined();
      const costly = await t.gql(token, wide, { n: 100 });
      expect(costly.body.errors?.[0]?.message).toMatch(/cost/i);
      expect(costly.body.data).toBeUndefined();
    }
    const anonymous = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: wide, variables: { n: 1 } }),
    });
    expect(anonymous.status).toBe(401);
  });

  it('refuses batched HTTP requests', async () => {
    const res = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify([{ query: '{ me { roles } }' }, { query: '{ me { roles } }' }]),
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/batch/i);
  });

  it('blocks requests a browser could send cross-site without a preflight (CSRF)', async () => {
    const simple = await fetch(`${t.url}/graphql?query=${encodeURIComponent('{ me { roles } }')}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(simple.status).toBe(400);
    const form = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: '{ me { roles } }' }),
    });
    expect(form.status).toBe(400);
    const preflighted = await fetch(`${t.url}/graphql?query=${encodeURIComponent('{ me { roles } }')}`, {
      headers: { authorization: `Bearer ${token}`, 'apollo-require-preflight': 'true' },
    });
    expect(await preflighted.json()).toEqual({ data: { me: { roles: [] } } });
  });

  it('offers introspection outside production', async () => {
    expect((await t.gql(token, '{ __schema { queryType { name } } }')).body.data).toEqual({ __schema: { queryType: { name: 'Query' } } });
  });

  it.each(SUGGESTION_BAIT)('suggests outside production, for %s', async (_what, query, variables) => {
    expect((await t.gql(token, query, variables)).body.errors?.[0]?.message).toMatch(/Did you mean/);
  });
});

describe('NODE_ENV=production', () => {
  let t: TestGateway;
  let token: string;
  const { logger, lines: logLines } = capturingLogger('error');
  beforeAll(async () => {
    t = await startGateway({ env: { NODE_ENV: 'production' }, logger });
    token = t.token({ userId: 'alice' });
  });
  afterAll(() => t.close());

  it('refuses introspection', async () => {
    const res = await t.gql(token, '{ __schema { types { name } } }');
    expect(res.body.data ?? null).toBeNull();
    expect(res.body.errors?.[0]?.message).toMatch(/introspection/i);
  });

  it.each(SUGGESTION_BAIT)('gives no suggestions over HTTP, for %s', async (_what, query, variables) => {
    const errors = (await t.gql(token, query, variables)).body.errors;
    expect(errors?.length).toBeGreaterThan(0);
    expect(JSON.stringify(errors)).not.toMatch(/Did you mean|"agentSessions"|"PENDING"|AgentFinalResponse/);
  });

  it.each(SUGGESTION_BAIT)('gives no suggestions over WebSocket, for %s', async (_what, query, variables) => {
    const client = wsClient(t.url, token);
    try {
      const operation = subscribe(client, query, variables);
      const errors = await operation.done.then(
        () => operation.results.flatMap((r) => r.errors ?? []),
        (e: unknown) => e,
      );
      expect(JSON.stringify(errors)).toMatch(/"message"/);
      expect(JSON.stringify(errors)).not.toMatch(/Did you mean|"agentSessions"|"PENDING"|AgentFinalResponse/);
    } finally {
      await client.dispose();
    }
  });

  /**
   * A fault no code path expects: the sessions' table is gone (renamed away and back), so every
   * statement on it fails with the database's own message (`no such table: agent_sessions`).
   */
  async function withoutSessionsTable(run: () => Promise<void>): Promise<void> {
    await t.gateway.db.dataSource.query('ALTER TABLE agent_sessions RENAME TO agent_sessions_away');
    try {
      await run();
    } finally {
      await t.gateway.db.dataSource.query('ALTER TABLE agent_sessions_away RENAME TO agent_sessions');
    }
  }

  it('masks unexpected errors and logs them with the request id', async () => {
    await withoutSessionsTable(async () => {
      const res = await t.gql(token, '{ agentSessions { totalCount } }');
      const error = res.body.errors?.[0];
      expect(error?.message).toBe('Internal server error');
      expect(error?.extensions).toEqual({ code: 'INTERNAL_SERVER_ERROR' });
      expect(JSON.stringify(res.body)).not.toMatch(/typeorm|sql|stack|at \w+ \(|no such table/i);
      const requestId = res.headers.get('x-request-id');
      expect(requestId).toBeTruthy();
      expect(logLines.some((l) => l.requestId === requestId && l.level === 50)).toBe(true);
    });
  });

  it('masks unexpected REST errors the same way, answering and logging the request id', async () => {
    await withoutSessionsTable(async () => {
      const res = await fetch(`${t.url}/blobs/sessions/s-1/turns/t-1/answer.md`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ errorCode: 'INTERNAL_SERVER_ERROR', errorMessage: 'Internal server error' });
      const requestId = res.headers.get('x-request-id');
      expect(requestId).toBeTruthy();
      expect(logLines.some((l) => l.requestId === requestId && l.level === 50)).toBe(true);
    });
  });

  it('answers every REST error with the request id, the caller\'s own when it sends a plain one', async () => {
    // Every route shares one body parser and one error presenter; the trailing slash reaches the same route.
    for (const path of ['/api/ai/agent/execute', '/api/ai/agent/execute/']) {
      const refused = await fetch(`${t.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'x-request-id': 'trace-42' },
        body: '{not json',
      });
      expect([refused.status, refused.headers.get('x-request-id')]).toEqual([400, 'trace-42']);
      expect(await refused.json()).toEqual({ errorCode: 'BAD_USER_INPUT', errorMessage: 'the request body is not valid JSON' });
    }
    const missing = await fetch(`${t.url}/blobs/sessions/s-1/turns/t-1/answer.md`, { headers: { authorization: `Bearer ${token}`, 'x-request-id': 'bad id!' } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  // The one body parser and error presenter answer /graphql and /graphql/ alike.
  it.each(['/graphql', '/graphql/'])('answers a body POST %s cannot read with a coded GraphQL error and the request id', async (path) => {
    const post = (body: string) =>
      fetch(`${t.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'x-request-id': 'trace-43' },
        body,
      });
    const broken = await post('{not json');
    expect([broken.status, broken.headers.get('x-request-id'), broken.headers.get('content-type')]).toEqual([400, 'trace-43', 'application/json; charset=utf-8']);
    expect(await broken.json()).toEqual({ errors: [{ message: 'the request body is not valid JSON', extensions: { code: 'BAD_USER_INPUT' } }] });
    const huge = await post(JSON.stringify({ query: `{ me { roles } } # ${'x'.repeat(t.gateway.config.limits.bodyLimitBytes)}` }));
    expect(huge.status).toBe(413);
    expect(await huge.json()).toEqual({ errors: [{ message: 'the request body is too large', extensions: { code: 'BAD_USER_INPUT' } }] });
    const fine = await post(JSON.stringify({ query: '{ me { roles } }' }));
    expect([fine.status, fine.headers.get('x-request-id'), ((await fine.json()) as { data?: unknown }).data]).toEqual([200, 'trace-43', { me: { roles: [] } }]);
  });
});
