import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler, type IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget, type IPodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Service, type IConfigMap, type IService } from 'kubernetes-models/v1';
import { describeWithKubectl, kubectlPath } from '../support/services';
import { asRecord, documentedVariables, gatewayConfig, NODE_VARIABLES, parseYamlStream, projectRoot } from './deploy-files';

const BASE = join(projectRoot, 'deploy/kubernetes');

/** The schema of each kind the base may hold: kubernetes-models' JSON schemas of the Kubernetes API, offline. */
const MODELS: Record<string, (object: Record<string, unknown>) => { validate(): void }> = {
  'v1/ConfigMap': (o) => new ConfigMap(o),
  'v1/Service': (o) => new Service(o),
  'apps/v1/Deployment': (o) => new Deployment(o),
  'policy/v1/PodDisruptionBudget': (o) => new PodDisruptionBudget(o),
  'autoscaling/v2/HorizontalPodAutoscaler': (o) => new HorizontalPodAutoscaler(o),
};

/** `kubectl kustomize dir`: what `kubectl apply -k dir` would send, rendered without a cluster. */
function render(dir: string): Record<string, unknown>[] {
  const out = spawnSync(kubectlPath!, ['kustomize', dir], { encoding: 'utf8', timeout: 30_000 });
  if (out.status !== 0) throw new Error(`kubectl kustomize failed: ${out.stderr || out.error?.message}`);
  return parseYamlStream(out.stdout).map((doc, i) => asRecord(doc, `document ${i}`));
}

/** Each object checked against the schema of its apiVersion and kind; the problems found, by object. */
function schemaProblems(objects: Record<string, unknown>[]): string[] {
  return objects.flatMap((o) => {
    const key = `${String(o.apiVersion)}/${String(o.kind)}`;
    const model = MODELS[key];
    if (!model) return [`${key}: not a kind this base should hold`];
    try {
      model(o).validate();
      return [];
    } catch (e) {
      return [`${key}: ${(e as Error).message}`];
    }
  });
}

/** A copy of the base with `file` edited, rendered and checked. */
function problemsOfBrokenCopy(file: string, edit: (text: string) => string): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'gw-kustomize-'));
  try {
    cpSync(BASE, dir, { recursive: true });
    const before = readFileSync(join(dir, file), 'utf8');
    const after = edit(before);
    if (after === before) throw new Error(`the edit left ${file} unchanged`);
    writeFileSync(join(dir, file), after);
    return schemaProblems(render(dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** KEY=value lines of an env file (comments and blank lines left out). */
const envFile = (text: string) =>
  Object.fromEntries(
    text
      .split('\n')
      .filter((line) => line.trim() && !line.startsWith('#'))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );

describeWithKubectl('deploy/kubernetes (Kustomize base)', () => {
  let objects: Record<string, unknown>[];
  const only = <T>(kind: string): T => {
    const found = objects.filter((o) => o.kind === kind);
    expect(found).toHaveLength(1);
    return found[0] as T;
  };

  beforeAll(() => {
    objects = render(BASE);
  });

  it('renders objects that are valid against the Kubernetes API schemas', () => {
    expect(objects.map((o) => o.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'Service']);
    expect(schemaProblems(objects)).toEqual([]);
  });

  it('fails that check for a copy with a wrong type or a missing required field', () => {
    expect(problemsOfBrokenCopy('deployment.yaml', (t) => t.replace('containerPort: 4000', 'containerPort: port-4000'))).toEqual([
      expect.stringMatching(/^apps\/v1\/Deployment: .*containerPort must be integer/),
    ]);
    expect(problemsOfBrokenCopy('horizontal-pod-autoscaler.yaml', (t) => t.replace(/^ {2}maxReplicas: \d+\n/m, ''))).toEqual([
      expect.stringMatching(/^autoscaling\/v2\/HorizontalPodAutoscaler: .*must have required property maxReplicas/),
    ]);
  });

  it('checks readiness on /readyz and liveness on /healthz, on the port the gateway listens on', () => {
    const deployment = only<IDeployment>('Deployment');
    const [container] = deployment.spec!.template.spec!.containers;
    const config = only<IConfigMap>('ConfigMap').data!;
    const http = container!.ports!.find((p) => p.name === 'http')!;
    expect(String(http.containerPort)).toBe(config.PORT);
    expect(container!.readinessProbe!.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(container!.livenessProbe!.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(container!.startupProbe!.httpGet).toEqual({ path: '/healthz', port: 'http' });
    const service = only<IService>('Service');
    expect(service.spec!.ports!.map((p) => p.targetPort)).toEqual(['http']);
    expect(service.spec!.selector).toEqual(deployment.spec!.template.metadata!.labels);
    expect(service.spec!.sessionAffinity).toBeUndefined();
  });

  it('stops a pod only after endpoints had time to drop it and the drain had its grace', () => {
    const spec = only<IDeployment>('Deployment').spec!;
    const [container] = spec.template.spec!.containers;
    const sleep = container!.lifecycle!.preStop!.exec!.command!;
    expect(sleep[0]).toBe('sleep');
    const preStopSeconds = Number(sleep[1]);
    expect(preStopSeconds).toBeGreaterThanOrEqual(3);
    const graceMs = gatewayConfig({ SHUTDOWN_GRACE_MS: only<IConfigMap>('ConfigMap').data!.SHUTDOWN_GRACE_MS! }).shutdownGraceMs;
    // Running turns, then connections, then the shutdown hooks, are each bounded by SHUTDOWN_GRACE_MS.
    expect(spec.template.spec!.terminationGracePeriodSeconds! * 1000).toBeGreaterThan(preStopSeconds * 1000 + 3 * graceMs);
    // A deploy brings a new pod up before it takes an old one down.
    expect(spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
  });

  it('runs as a non-root user on a read-only root filesystem, with DATA_DIR and /tmp on emptyDirs', () => {
    const pod = only<IDeployment>('Deployment').spec!.template.spec!;
    const [container] = pod.containers;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.securityContext!.runAsUser).toBeGreaterThan(0);
    expect(container!.securityContext).toEqual({
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    const emptyDirs = new Set(pod.volumes!.filter((v) => v.emptyDir).map((v) => v.name));
    const mounted = container!.volumeMounts!.filter((m) => emptyDirs.has(m.name)).map((m) => m.mountPath);
    expect(mounted.sort()).toEqual([only<IConfigMap>('ConfigMap').data!.DATA_DIR, '/tmp'].sort());
    expect(pod.automountServiceAccountToken).toBe(false);
  });

  it('requests resources within its limits and scales on CPU between at least two replicas', () => {
    const deployment = only<IDeployment>('Deployment');
    const { requests, limits } = deployment.spec!.template.spec!.containers[0]!.resources!;
    const bytes = (q: string) => Number(/^(\d+)Mi$/.exec(q)![1]) * 2 ** 20;
    const cores = (q: string) => (q.endsWith('m') ? Number(q.slice(0, -1)) / 1000 : Number(q));
    expect(bytes(String(requests!.memory))).toBeLessThanOrEqual(bytes(String(limits!.memory)));
    expect(cores(String(requests!.cpu))).toBeLessThanOrEqual(cores(String(limits!.cpu)));
    // V8's heap limit in NODE_OPTIONS must leave room under the container's memory limit.
    const heapMb = Number(/--max-old-space-size=(\d+)/.exec(only<IConfigMap>('ConfigMap').data!.NODE_OPTIONS!)![1]);
    expect(heapMb * 2 ** 20).toBeLessThan(bytes(String(limits!.memory)));
    // The autoscaler owns the replica count.
    expect(deployment.spec!.replicas).toBeUndefined();
    const hpa = only<IHorizontalPodAutoscaler>('HorizontalPodAutoscaler').spec!;
    expect(hpa.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata!.name });
    expect(hpa.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpa.metrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: expect.any(Number) } } }]);
    const pdb = only<IPodDisruptionBudget>('PodDisruptionBudget').spec!;
    expect(pdb.selector!.matchLabels).toEqual(deployment.spec!.template.metadata!.labels);
    expect(pdb.maxUnavailable).toBe(1);
  });

  it('configures the gateway with documented variables only, and holds no secret', () => {
    const documented = documentedVariables();
    const config = only<IConfigMap>('ConfigMap').data!;
    expect(Object.keys(config).filter((k) => !documented.has(k) && !NODE_VARIABLES.has(k))).toEqual([]);
    const container = only<IDeployment>('Deployment').spec!.template.spec!.containers[0]!;
    expect(container.envFrom).toEqual([{ configMapRef: { name: only<IConfigMap>('ConfigMap').metadata!.name } }]);
    // Every variable set on the container comes from the operator's Secret, never a literal value.
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    expect(container.env!.filter((e) => e.value !== undefined || !e.valueFrom?.secretKeyRef)).toEqual([]);
    const refs = container.env!.map((e) => e.valueFrom!.secretKeyRef!);
    expect(new Set(refs.map((r) => r.name))).toEqual(new Set(['agent-session-gateway']));
    expect(refs.filter((r) => !r.optional).map((r) => r.key)).toEqual(['JWT_SECRET', 'DATABASE_URL', 'REDIS_URL']);
    expect(refs.filter((r) => !documented.has(r.key))).toEqual([]);

    // secret.env.example names exactly the keys the Deployment reads (optional ones commented out);
    // it holds no usable JWT_SECRET, and once one is filled in the gateway starts, every instance
    // sharing MySQL, Redis, S3 and Qdrant.
    const example = readFileSync(join(BASE, 'secret.env.example'), 'utf8');
    const named = [...example.matchAll(/^#? ?([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]);
    expect(named.sort()).toEqual(refs.map((r) => r.key).sort());
    const secret = envFile(example);
    expect(() => gatewayConfig({ ...config, ...secret })).toThrow(/JWT_SECRET/);
    const started = gatewayConfig({ ...config, ...secret, JWT_SECRET: 's'.repeat(64) });
    expect(started.isProduction).toBe(true);
    expect(started.databaseUrl).toMatch(/^mysql:\/\//);
    expect(started.live.redisUrl).toMatch(/^redis:\/\//);
    expect(started.blobs.s3Bucket).toBeTruthy();
    expect(started.retrieval.qdrantUrl).toBeTruthy();
  });

  it('keeps a filled-in secret.env out of git', () => {
    const ignored = execFileSync('git', ['check-ignore', 'deploy/kubernetes/secret.env'], { cwd: projectRoot, encoding: 'utf8' });
    expect(ignored.trim()).toBe('deploy/kubernetes/secret.env');
  });
});
