import { alice, startGateway, type TestGateway } from '../support/testkit';

const METRICS_TOKEN = 'metrics-exposure-token';

/** The distinct values of the `operation` label in a scrape. */
const operationLabels = (text: string): Set<string> => new Set([...text.matchAll(/^gateway_graphql_operations_total\{[^}]*operation="([^"]*)"/gm)].map((m) => m[1]!));

describe('/metrics closed by default in production (issue 36)', () => {
  const started: TestGateway[] = [];
  const start = async (env: Record<string, string>) => {
    const t = await startGateway({ env: { NODE_ENV: 'production', ...env } });
    started.push(t);
    return t;
  };
  afterAll(() => Promise.all(started.map((t) => t.close())));

  it('is not served on the API port without METRICS_TOKEN or METRICS_PORT', async () => {
    const t = await start({});
    const res = await fetch(`${t.url}/metrics`);
    expect(res.status).toBe(404);
    expect(await res.text()).not.toMatch(/gateway_/);
    expect(t.gateway.metricsUrl).toBeNull();
  });

  it('is served on the API port behind METRICS_TOKEN when that is set', async () => {
    const t = await start({ METRICS_TOKEN });
    expect((await fetch(`${t.url}/metrics`)).status).toBe(401);
    const res = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/^gateway_http_requests_total/m);
  });

  it('is served on its own listener, bound to 127.0.0.1, when METRICS_PORT is set, and then not on the API port', async () => {
    const t = await start({ METRICS_PORT: '0' });
    expect(t.gateway.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${t.url}/metrics`)).status).toBe(404);
    const res = await fetch(`${t.gateway.metricsUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/^gateway_http_requests_total/m);
    // Nothing else is served there.
    expect((await fetch(`${t.gateway.metricsUrl}/graphql`, { method: 'POST' })).status).toBe(404);
    expect((await fetch(`${t.gateway.metricsUrl}/healthz`)).status).toBe(404);
  });

  it('labels only operation names the gateway knows: a hundred made-up names add one series, `other`', async () => {
    const t = await start({ METRICS_PORT: '0', METRICS_OPERATION_NAMES: 'NightlyReport' });
    const token = t.tokenOf(alice);
    for (let i = 0; i < 100; i++) await t.gql(token, `query MadeUp${i} { me { roles } }`);
    await t.gql(token, 'query Viewer { me { roles } }');
    await t.gql(token, 'query NightlyReport { me { roles } }');
    await t.gql(token, '{ me { roles } }');
    const text = await (await fetch(`${t.gateway.metricsUrl}/metrics`)).text();
    expect(operationLabels(text)).toEqual(new Set(['other', 'Viewer', 'NightlyReport', 'anonymous']));
    expect(text).toMatch(/^gateway_graphql_operations_total\{operation="other",type="query",transport="http",outcome="ok"\} 100$/m);
  });

  it('stays open on the API port outside production (local use)', async () => {
    const t = await startGateway({ env: { NODE_ENV: 'development' } });
    started.push(t);
    expect((await fetch(`${t.url}/metrics`)).status).toBe(200);
  });
});
