import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { projectRoot, startServerProcess, stopServerProcess } from '../support/server-process';

const run = promisify(execFile);
const SECRET = 'e2e-secret-e2e-secret-e2e-secret-e2e-secret';

interface OtlpSpan {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly attributes?: { key: string; value: Record<string, unknown> }[];
}
interface OtlpExport {
  resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
}

/** A local OTLP/HTTP receiver: keeps every JSON export POSTed to it. */
async function startReceiver(): Promise<{ url: string; exports: OtlpExport[]; requests: string[]; close(): Promise<void> }> {
  const exports: OtlpExport[] = [];
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      requests.push(`${req.method} ${req.url} ${req.headers['content-type']} ${String(req.headers['x-tenant'])}`);
      const raw = Buffer.concat(parts);
      const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
      exports.push(JSON.parse(body.toString('utf8')) as OtlpExport);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, exports, requests, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value ? Object.values(value)[0] : undefined;
};

/** The built server (`npm start`), since the OTLP exporter loads node:http by dynamic import, which jest's sandbox refuses. */
describe('OpenTelemetry tracing from the built server', () => {
  it('exports spans for the GraphQL operation, SQL, the provider call and retrieval to a local OTLP/HTTP receiver', async () => {
    const receiver = await startReceiver();
    const env = { DATA_DIR: mkdtempSync(join(tmpdir(), 'gw-trace-')), JWT_SECRET: SECRET };
    const cli = async (script: string, args: string[]) =>
      (await run(process.execPath, [`dist/cli/${script}.js`, ...args], { cwd: projectRoot, env: { ...process.env, ...env } })).stdout.trim();
    try {
      await cli('seed', ['--org', 'acme', '--users', '2', '--sessions', '2', '--turns', '1']);
      const token = await cli('token', ['--user', 'user-1', '--org', 'acme']);
      const server = await startServerProcess({
        ...env,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=gateway-tests',
        OTEL_SERVICE_NAME: 'gateway-under-test',
      });
      try {
        const gql = async (query: string, variables: Record<string, unknown> = {}) => {
          const res = await fetch(`${server.url}/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
            body: JSON.stringify({ query, variables }),
          });
          return (await res.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
        };
        const list = await gql('query Mine { agentSessions(first: 1, filter: { ownerUserId: "user-1" }) { edges { node { id agentContextId conversationContextId } } } }');
        const node = (list.data as { agentSessions: { edges: { node: { id: string; agentContextId: string; conversationContextId: string | null } }[] } }).agentSessions.edges[0]!.node;
        const answer = await gql('mutation Execute($input: AgentExecuteInput!) { execute(input: $input) { __typename } }', {
          input: { agentContextId: node.agentContextId, conversationContextId: node.conversationContextId, sessionId: node.id, instruction: 'trace me' },
        });
        expect(answer.errors).toBeUndefined();
      } finally {
        // SIGTERM: the gateway flushes the spans still queued before it exits.
        expect(await stopServerProcess(server.child)).toBe(0);
      }
    } finally {
      await receiver.close();
      rmSync(env.DATA_DIR, { recursive: true, force: true });
    }

    expect(receiver.requests.length).toBeGreaterThan(0);
    expect(receiver.requests.every((r) => r === 'POST /v1/traces application/json gateway-tests')).toBe(true);
    const resources = receiver.exports.flatMap((e) => e.resourceSpans);
    expect(resources.map((r) => r.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue)).toContain('gateway-under-test');
    const spans = resources.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
    const execute = spans.find((s) => s.name === 'graphql.mutation Execute');
    expect(execute).toBeDefined();
    expect([attribute(execute!, 'graphql.outcome'), attribute(execute!, 'http.route')]).toEqual(['ok', '/graphql']);
    const inTrace = spans.filter((s) => s.traceId === execute!.traceId);
    expect([...new Set(inTrace.map((s) => s.name))]).toEqual(expect.arrayContaining(['llm.respond', 'retrieval.retrieve', 'sql']));
    // Every span of the request descends from the request's own span.
    const byId = new Map(inTrace.map((s) => [s.spanId, s]));
    const root = (s: OtlpSpan): OtlpSpan => (s.parentSpanId && byId.has(s.parentSpanId) ? root(byId.get(s.parentSpanId)!) : s);
    expect(inTrace.every((s) => root(s).spanId === execute!.spanId)).toBe(true);
    expect(attribute(inTrace.find((s) => s.name === 'sql')!, 'db.system')).toBe('sqlite');
    // An operation name the gateway does not know names no span (span names stay few); the attribute keeps it.
    const mine = spans.find((s) => s.name === 'graphql.query other');
    expect(mine && attribute(mine, 'graphql.operation.name')).toBe('Mine');
  }, 60_000);
});
