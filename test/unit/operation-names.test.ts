import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';
import { KNOWN_OPERATION_NAMES, OperationNames } from '../../src/observability/metrics';

const ROOT = join(__dirname, '..', '..');
const NAMED = /\b(?:query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]*)\s*[({@]/g;

/** Named operations in the documents the gateway's own clients send. */
function clientOperationNames(): Set<string> {
  const files = [
    ...readdirSync(join(ROOT, 'packages/client/src/operations')).map((f) => join('packages/client/src/operations', f)),
    ...readdirSync(join(ROOT, 'packages/client/src')).filter((f) => f.endsWith('.ts')).map((f) => join('packages/client/src', f)),
    ...readdirSync(join(ROOT, 'src/web')).filter((f) => f.endsWith('.ts')).map((f) => join('src/web', f)),
    ...readdirSync(join(ROOT, 'examples')).map((f) => join('examples', f)),
    'README.md',
    'packages/client/README.md',
  ];
  const names = new Set<string>();
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    // In Markdown only the code is looked at: prose says "a subscription open (…)".
    const code = file.endsWith('.md') ? [...text.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].map((m) => m[1]).join('\n') : text;
    for (const [, name] of code.matchAll(NAMED)) names.add(name!);
  }
  return names;
}

describe('operation-name labels (issue 36)', () => {
  it('know every operation the typed client, the dashboard, the examples and the README send', () => {
    const found = clientOperationNames();
    // The scan finds the typed client's documents at least.
    expect([...found]).toEqual(expect.arrayContaining(['SessionList', 'SessionDetail', 'Viewer', 'TurnStatusChanged', 'Execute']));
    expect([...found].filter((n) => !KNOWN_OPERATION_NAMES.includes(n))).toEqual([]);
  });

  it('label known and allowed names as themselves, anything else as other', () => {
    const names = new OperationNames(['NightlyReport']);
    expect(['SessionList', 'NightlyReport', 'MadeUp', 'sessionlist', null, ''].map((n) => names.label(n))).toEqual([
      'SessionList', 'NightlyReport', 'other', 'other', 'anonymous', 'anonymous',
    ]);
  });

  it('read METRICS_OPERATION_NAMES, METRICS_PORT and METRICS_HOST', () => {
    expect(loadConfig({ METRICS_OPERATION_NAMES: ' A, B_2 ,' }).metricsOperationNames).toEqual(['A', 'B_2']);
    expect(() => loadConfig({ METRICS_OPERATION_NAMES: 'A,not-a-name' })).toThrow(ConfigError);
    expect([loadConfig({}).metricsPort, loadConfig({}).metricsHost]).toEqual([null, '127.0.0.1']);
    expect([loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' }).metricsPort, loadConfig({ METRICS_HOST: '0.0.0.0' }).metricsHost]).toEqual([9464, '0.0.0.0']);
  });
});
