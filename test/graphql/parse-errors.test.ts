import type { GraphQLFormattedError } from 'graphql';
import { rawStream } from '../support/sse';
import { RawSocket } from '../support/ws';
import { startGateway, type TestGateway } from '../support/testkit';

/** A document graphql-js cannot parse (with the location it reports) and one over GRAPHQL_MAX_TOKENS (50 here). */
const SYNTAX_ERROR = '{ me { roles }';
const TOO_MANY_TOKENS = `{ ${Array.from({ length: 60 }, () => '__typename').join(' ')} }`;
const BROKEN: readonly (readonly [string, string])[] = [
  ['a syntax error', SYNTAX_ERROR],
  ['a document over the token limit', TOO_MANY_TOKENS],
];

/** What every transport must say about a document that does not parse: the client's error, with graphql-js's location. */
const parseFailed = (query: string) =>
  query === SYNTAX_ERROR
    ? { message: expect.stringMatching(/^Syntax Error/), locations: [{ line: 1, column: 15 }], extensions: { code: 'GRAPHQL_PARSE_FAILED' } }
    : { message: expect.stringMatching(/more tha[nt] 50 tokens/), locations: [expect.any(Object)], extensions: { code: 'GRAPHQL_PARSE_FAILED' } };

describe('a document that does not parse is the client\'s error on every transport', () => {
  let t: TestGateway;
  let token: string;
  beforeAll(async () => {
    t = await startGateway({ env: { GRAPHQL_MAX_TOKENS: '50' } });
    token = t.token({ userId: 'alice' });
  });
  afterAll(() => t.close());

  it.each(BROKEN)('%s: 400 GRAPHQL_PARSE_FAILED over POST, GET and SSE; an error message for the operation over WebSocket', async (_what, query) => {
    const post = await t.gql(token, query);
    expect([post.status, post.body.errors?.[0]]).toEqual([400, parseFailed(query)]);
    // Every other transport says exactly what POST says.
    const said = post.body.errors?.[0];

    const url = new URL(`${t.url}/graphql`);
    url.searchParams.set('query', query);
    // A content type CSRF prevention accepts on a GET.
    const get = await fetch(url, { headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
    const getBody = (await get.json()) as { errors?: GraphQLFormattedError[] };
    expect([get.status, getBody.errors?.[0]]).toEqual([400, said]);

    for (const method of ['POST', 'GET'] as const) {
      const sse = await rawStream(t.url, method === 'POST' ? { token, body: { query } } : { method, token, query: { query } });
      expect({ method, status: sse.status, type: sse.contentType, error: (JSON.parse(sse.text) as { errors: unknown[] }).errors[0] }).toEqual({
        method,
        status: 400,
        type: expect.stringMatching(/^application\/json/),
        error: said,
      });
    }

    const socket = new RawSocket(t.url);
    try {
      await socket.send({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } });
      await socket.waitForMessage('connection_ack');
      await socket.send({ id: 'broken', type: 'subscribe', payload: { query } });
      const error = await socket.waitForMessage('error');
      expect(error).toEqual({ id: 'broken', type: 'error', payload: [said] });
      // The socket stays usable: the next operation on it is answered.
      await socket.send({ id: 'fine', type: 'subscribe', payload: { query: '{ me { user { id } } }' } });
      await socket.waitForMessage('complete');
      expect(socket.messages.find((m) => m.id === 'fine' && m.type === 'next')).toEqual({
        id: 'fine',
        type: 'next',
        payload: { data: { me: { user: { id: 'alice' } } } },
      });
    } finally {
      socket.ws.terminate();
    }
  });
});
