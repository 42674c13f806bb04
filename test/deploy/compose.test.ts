import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DCLinter } from 'dclint';
import {
  asRecord,
  documentedVariables,
  durationMs,
  gatewayConfig,
  parseYaml,
  projectRoot,
  readProjectFile,
} from './deploy-files';

// `docker compose config` needs the Compose plugin, which this machine's docker client lacks
// (and no engine runs here), so the file is checked the way that command checks it offline:
// against the Compose Specification's JSON schema (bundled with dclint), then references and
// values by hand.

/** dclint's style rules are off; these catch mistakes that break or endanger a stack. */
const RULES = {
  'no-build-and-image': 0,
  'no-duplicate-container-names': 2,
  'no-duplicate-exported-ports': 2,
  'no-quotes-in-volumes': 0,
  'no-unbound-port-interfaces': 0,
  'no-version-field': 2,
  'require-project-name-field': 0,
  'require-quotes-in-ports': 0,
  'service-container-name-regex': 0,
  'service-dependencies-alphabetical-order': 0,
  'service-image-require-explicit-tag': 2,
  'service-keys-order': 0,
  'service-ports-alphabetical-order': 0,
  'services-alphabetical-order': 0,
  'top-level-properties-order': 0,
} as const;

/** What dclint reports: its declarations do not resolve under this project's module resolution, so its results arrive untyped. */
interface LintMessage {
  readonly rule: string;
  readonly type: 'error' | 'warning';
  readonly message: string;
}

/** The part of dclint the test uses: its bundled typings do not resolve under our module settings. */
type Linter = new (options: { rules: typeof RULES; quiet: boolean; debug: boolean; exclude: string[] }) => {
  lintFiles(paths: string[], fix: boolean): { messages: LintMessage[] }[];
};

function lint(path: string): { errors: string[] } {
  const [result] = new (DCLinter as unknown as Linter)({ rules: RULES, quiet: true, debug: false, exclude: [] }).lintFiles([path], false);
  const messages: readonly LintMessage[] = result?.messages ?? [];
  return { errors: messages.filter((m) => m.type === 'error').map((m) => `${m.rule}: ${m.message}`) };
}

const COMPOSE = join(projectRoot, 'docker-compose.yml');
const compose = asRecord(parseYaml(readProjectFile('docker-compose.yml')), 'docker-compose.yml');
const services = asRecord(compose.services, 'services');
const service = (name: string) => asRecord(services[name], `service ${name}`);
const environment = (name: string) => asRecord(service(name).environment, `${name}'s environment`) as Record<string, string>;
const GATEWAYS = ['gateway-a', 'gateway-b'];

/** The value Compose would interpolate with JWT_SECRET set and OPENAI_API_KEY unset. */
const interpolate = (value: string) =>
  value.replace(/\$\{(\w+)(?::?[-?][^}]*)?\}/g, (_all, name: string) => (name === 'JWT_SECRET' ? 'j'.repeat(40) : ''));

describe('docker-compose.yml', () => {
  it('is valid against the Compose Specification, with every image pinned and no port published twice', () => {
    expect(lint(COMPOSE).errors).toEqual([]);
  });

  it('fails that check when the gateway definition has a misspelt key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-compose-'));
    try {
      const broken = readProjectFile('docker-compose.yml').replace(/^ {2}stop_grace_period:/m, '  stop_grace_periods:');
      expect(broken).not.toEqual(readProjectFile('docker-compose.yml'));
      writeFileSync(join(dir, 'docker-compose.yml'), broken);
      expect(lint(join(dir, 'docker-compose.yml')).errors).toEqual([
        expect.stringMatching(/invalid-schema: .*\/services\/gateway-a.*must NOT have additional properties/),
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs two gateway instances of one image and configuration', () => {
    const [a, b] = GATEWAYS.map(service);
    expect(a!.build).toBe('.');
    expect(b!.image).toEqual(a!.image);
    expect(environment('gateway-b')).toEqual(environment('gateway-a'));
    // The second starts once the first is healthy: the first start's migrations run once.
    expect(asRecord(b!.depends_on, 'gateway-b depends_on')['gateway-a']).toEqual({ condition: 'service_healthy' });
  });

  it('puts HAProxy, pinned to a release, in front of both with deploy/haproxy/haproxy.cfg', () => {
    const proxy = service('proxy');
    expect(proxy.image).toMatch(/^haproxy:\d+\.\d+\.\d+(-alpine)?$/);
    const mount = (proxy.volumes as string[]).find((v) => v.endsWith(':/usr/local/etc/haproxy/haproxy.cfg:ro'));
    expect(mount?.split(':')[0]).toBe('./deploy/haproxy/haproxy.cfg');
    const port = environment('gateway-a').PORT;
    expect(environment('proxy')).toMatchObject({ GATEWAY_A_ADDR: `gateway-a:${port}`, GATEWAY_B_ADDR: `gateway-b:${port}` });
    // The published entry point is the proxy's listener; no gateway publishes a port of its own.
    const bind = environment('proxy').HAPROXY_BIND!;
    expect(proxy.ports).toContain(`4000${bind}`);
    for (const name of GATEWAYS) expect(service(name).ports).toBeUndefined();
  });

  it('gives the gateways only documented variables, with values the gateway starts with', () => {
    const documented = documentedVariables();
    const env = environment('gateway-a');
    expect(Object.keys(env).filter((name) => !documented.has(name))).toEqual([]);
    const config = gatewayConfig(Object.fromEntries(Object.entries(env).map(([k, v]) => [k, interpolate(String(v))])));
    // Several instances share everything they keep; nothing may fall back to a local store.
    expect(config.databaseUrl).toMatch(/^mysql:\/\//);
    expect(config.live.redisUrl).toMatch(/^redis:\/\//);
    expect(config.blobs.s3Bucket).toBeTruthy();
    expect(config.retrieval.qdrantUrl).toBeTruthy();
  });

  it('lets a stopping gateway drain before Docker kills it, on a filesystem it cannot write to', () => {
    const graceMs = gatewayConfig({ SHUTDOWN_GRACE_MS: environment('gateway-a').SHUTDOWN_GRACE_MS! }).shutdownGraceMs;
    for (const name of GATEWAYS) {
      // Running turns, then connections, then the shutdown hooks, are each bounded by the grace.
      expect(durationMs(String(service(name).stop_grace_period))).toBeGreaterThan(3 * graceMs);
      expect(service(name).read_only).toBe(true);
      expect(service(name).tmpfs).toEqual(expect.arrayContaining(['/data', '/tmp']));
    }
  });

  it('refers only to services, volumes and files that exist', () => {
    const volumes = Object.keys(asRecord(compose.volumes, 'volumes'));
    for (const [name, value] of Object.entries(services)) {
      const def = asRecord(value, name);
      const deps = Array.isArray(def.depends_on) ? (def.depends_on as string[]) : Object.keys(asRecord(def.depends_on ?? {}, 'depends_on'));
      for (const dep of deps) expect(Object.keys(services)).toContain(dep);
      for (const volume of (def.volumes ?? []) as string[]) {
        const source = volume.split(':')[0]!;
        if (source.startsWith('.')) expect(existsSync(join(projectRoot, source))).toBe(true);
        else expect(volumes).toContain(source);
      }
    }
  });
});
