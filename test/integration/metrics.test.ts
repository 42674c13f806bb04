import type { Client as WsClient } from 'graphql-ws';
import type { Client as SseClient } from 'graphql-sse';
import { alice, chunk, EXECUTE_SETUP, startGateway, type TestGateway } from '../support/testkit';
import { describeWithMysql } from '../support/services';
import { sseClient } from '../support/sse';
import { subscribe, waitUntil, wsClient } from '../support/ws';

const METRICS_TOKEN = 'metrics-test-token';

/** The samples of a Prometheus text exposition: `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

/** The value of one series, its labels given in any order; 0 when absent. */
function value(all: Map<string, number>, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  let total = 0;
  for (const [series, v] of all) {
    const brace = series.indexOf('{');
    const seriesName = brace < 0 ? series : series.slice(0, brace);
    if (seriesName !== name) continue;
    const own = brace < 0 ? [] : series.slice(brace + 1, -1).split(/,(?=[a-z_]+=")/);
    if (own.length === wanted.length && wanted.every((w) => own.includes(w))) total += v;
  }
  return total;
}

describe('GET /metrics', () => {
  let h: TestGateway;
  const wsClients: WsClient[] = [];
  const sseClients: SseClient[] = [];
  const scrape = async (token: string | null = METRICS_TOKEN) =>
    fetch(`${h.url}/metrics`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
  const current = async () => samples(await (await scrape()).text());

  beforeAll(async () => {
    h = await startGateway({ ...EXECUTE_SETUP, env: { METRICS_TOKEN, METRICS_OPERATION_NAMES: 'Broken,Watch' } });
  });
  afterAll(async () => {
    await Promise.all(wsClients.map(async (c) => c.dispose()));
    sseClients.forEach((c) => c.dispose());
    await h.close();
  });

  it('wants the METRICS_TOKEN when it is set', async () => {
    expect((await scrape(null)).status).toBe(401);
    expect((await scrape('wrong')).status).toBe(401);
    const res = await scrape();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    // Process metrics come with it.
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
  });

  it('counts HTTP requests and GraphQL operations by name and outcome', async () => {
    const token = h.tokenOf(alice);
    const before = await current();
    await h.gql(token, 'query Viewer { me { user { id } } }');
    await h.gql(token, 'query Viewer { me { user { id } } }');
    await h.gql(token, '{ me { user { id } } }');
    await h.gql(token, 'query Broken { agentSession(id: "nope") { nope } }');
    await h.gql(null, 'query Viewer { me { user { id } } }');
    const after = await current();
    const delta = (name: string, labels: Record<string, string>) => value(after, name, labels) - value(before, name, labels);
    const op = (operation: string, outcome: string) => ({ operation, type: 'query', transport: 'http', outcome });
    expect(delta('gateway_graphql_operations_total', op('Viewer', 'ok'))).toBe(2);
    expect(delta('gateway_graphql_operations_total', op('anonymous', 'ok'))).toBe(1);
    expect(delta('gateway_graphql_operation_duration_seconds_count', op('Viewer', 'ok'))).toBe(2);
    expect(delta('gateway_graphql_operations_total', { operation: 'Broken', type: 'query', transport: 'http', outcome: 'GRAPHQL_VALIDATION_FAILED' })).toBe(1);
    expect(delta('gateway_http_requests_total', { method: 'POST', route: '/graphql', status: '200' })).toBe(3);
    expect(delta('gateway_http_requests_total', { method: 'POST', route: '/graphql', status: '401' })).toBe(1);
    expect(delta('gateway_http_requests_total', { method: 'GET', route: '/metrics', status: '200' })).toBe(1);
    expect(delta('gateway_http_request_duration_seconds_count', { method: 'POST', route: '/graphql', status: '400' })).toBe(1);
  });

  it('shows connections, streams and subscriptions, and live operations by transport', async () => {
    const session = await h.gateway.sessions.lifecycle.createSession(alice, { name: 'watched', agentContextId: h.agentContextId });
    const query = `subscription Watch($id: ID!) { turnStatusChanged(sessionId: $id) { eventId } }`;
    const ws = wsClient(h.url, h.tokenOf(alice));
    wsClients.push(ws);
    const sse = sseClient(h.url, h.tokenOf(alice));
    sseClients.push(sse);
    const subs = [subscribe(ws, query, { id: session.id }), subscribe(sse, query, { id: session.id })];
    await waitUntil(() => h.gateway.live.executor.subscriberCount === 2);
    const during = await current();
    expect(value(during, 'gateway_websocket_connections')).toBe(1);
    expect(value(during, 'gateway_sse_streams')).toBe(1);
    expect(value(during, 'gateway_active_subscriptions')).toBe(2);
    expect(value(during, 'gateway_live_groups')).toBe(1);
    for (const transport of ['ws', 'sse']) {
      expect(value(during, 'gateway_graphql_operations_total', { operation: 'Watch', type: 'subscription', transport, outcome: 'ok' })).toBe(1);
    }
    subs.forEach((s) => s.unsubscribe());
    await waitUntil(() => h.gateway.live.executor.subscriberCount === 0);
    expect(value(await current(), 'gateway_active_subscriptions')).toBe(0);
  });

  it('counts turns by final status, provider calls with their retries and tokens, retrieval, bus lag and SQL', async () => {
    const before = await current();
    h.retriever.chunks = [chunk('a')];
    h.fake.enqueue(
      { kind: 'http_error', status: 429, headers: { 'retry-after-ms': '10' } },
      { kind: 'text', chunks: ['all ', 'done'], usage: { input: 120, output: 7 } },
    );
    const answer = await h.execute(alice, { instruction: 'count me' });
    expect(answer.body.errors).toBeUndefined();
    h.fake.enqueue({ kind: 'http_error', status: 400, message: 'bad request' });
    const failed = await h.execute(alice, { instruction: 'fail me' });
    expect(failed.body.errors?.[0]?.extensions?.code).toBe('LLM_FAILED');
    await waitUntil(async () => value(await current(), 'gateway_event_bus_lag_seconds_count') - value(before, 'gateway_event_bus_lag_seconds_count') >= 4);
    const after = await current();
    const delta = (name: string, labels: Record<string, string> = {}) => value(after, name, labels) - value(before, name, labels);
    expect(delta('gateway_turns_total', { status: 'COMPLETED' })).toBe(1);
    expect(delta('gateway_turns_total', { status: 'FAILED' })).toBe(1);
    expect(delta('gateway_llm_retries_total')).toBe(1);
    expect(delta('gateway_llm_tokens_total', { kind: 'input' })).toBe(120);
    expect(delta('gateway_llm_tokens_total', { kind: 'output' })).toBe(7);
    expect(delta('gateway_llm_call_duration_seconds_count', { outcome: 'ok' })).toBe(1);
    expect(delta('gateway_llm_call_duration_seconds_count', { outcome: 'failed' })).toBe(1);
    expect(delta('gateway_retrieval_duration_seconds_count', { outcome: 'ok' })).toBe(2);
    expect(delta('gateway_db_statement_duration_seconds_count', { outcome: 'ok' })).toBeGreaterThan(4);
    expect(delta('gateway_graphql_operations_total', { operation: 'Execute', type: 'mutation', transport: 'http', outcome: 'ok' })).toBe(1);
    expect(delta('gateway_graphql_operations_total', { operation: 'Execute', type: 'mutation', transport: 'http', outcome: 'LLM_FAILED' })).toBe(1);
  });
  // Last: it uses up the distinct names the other tests' operations need.
  it('keeps the operation-name label bounded', async () => {
    const token = h.tokenOf(alice);
    for (let i = 0; i < 110; i++) await h.gql(token, `query Name${i} { me { user { id } } }`);
    const after = await current();
    const names = new Set<string>();
    for (const series of after.keys()) {
      const match = /^gateway_graphql_operations_total\{.*operation="([^"]+)"/.exec(series);
      if (match) names.add(match[1]!);
    }
    // At most 100 names, and the two catch-alls.
    expect(names.size).toBeLessThanOrEqual(102);
    expect(names.has('anonymous')).toBe(true);
    expect(names.has('other')).toBe(true);
  });
});

describe('GET /metrics without METRICS_TOKEN', () => {
  it('is open', async () => {
    const h = await startGateway({ ...EXECUTE_SETUP, provider: 'offline' });
    try {
      const res = await fetch(`${h.url}/metrics`);
      expect(res.status).toBe(200);
      // The embedded database has no pool to report.
      expect(await res.text()).not.toContain('gateway_db_pool_connections{');
    } finally {
      await h.close();
    }
  });
});

describeWithMysql('GET /metrics on MySQL', () => {
  it('reports the database pool', async () => {
    const h = await startGateway({ ...EXECUTE_SETUP, database: 'mysql', provider: 'offline', env: { DB_POOL_SIZE: '4' } });
    try {
      await h.gql(h.tokenOf(alice), '{ me { user { id } } }');
      const all = samples(await (await fetch(`${h.url}/metrics`)).text());
      expect(value(all, 'gateway_db_pool_connections', { state: 'size' })).toBe(4);
      expect(value(all, 'gateway_db_pool_connections', { state: 'in_use' }) + value(all, 'gateway_db_pool_connections', { state: 'idle' })).toBeGreaterThanOrEqual(1);
      expect(value(all, 'gateway_db_pool_connections', { state: 'waiting' })).toBe(0);
    } finally {
      await h.close();
    }
  });
});
