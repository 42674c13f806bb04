import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfig, type Config } from '../../src/config';
import { projectRoot } from '../support/server-process';

export { projectRoot };

export const readProjectFile = (path: string): string => readFileSync(join(projectRoot, path), 'utf8');

/** One YAML document, with `<<` merge keys resolved as Compose resolves them. */
export const parseYaml = (text: string): unknown => parse(text, { merge: true }) as unknown;

/** Every document of a multi-document stream (what `kubectl kustomize` prints). */
export function parseYamlStream(text: string): unknown[] {
  return parseAllDocuments(text).map((doc) => {
    if (doc.errors.length > 0) throw new Error(doc.errors.map((e) => e.message).join('\n'));
    return doc.toJS() as unknown;
  });
}

/** Narrows a parsed YAML value to a mapping, failing with `what` when it is not one. */
export function asRecord(value: unknown, what: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${what} is not a mapping`);
  return value as Record<string, unknown>;
}

/** The variables README.md's Environment table documents (first column, every `NAME` in it). */
export function documentedVariables(): Set<string> {
  const readme = readProjectFile('README.md');
  const section = readme.slice(readme.indexOf('\n## Environment'), readme.indexOf('\n## ', readme.indexOf('\n## Environment') + 1));
  const names = new Set<string>();
  for (const line of section.split('\n')) {
    const firstCell = /^\|([^|]+)\|/.exec(line)?.[1] ?? '';
    for (const m of firstCell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) names.add(m[1]!);
  }
  return names;
}

/** Node's own variables a deployment may set beside the gateway's. */
export const NODE_VARIABLES = new Set(['NODE_OPTIONS']);

/** The gateway's parsed configuration for `env`; throws the start-up error a bad value causes. */
export const gatewayConfig = (env: Record<string, string>): Config => loadConfig(env);

/** "30s", "1m30s", "500ms" (Compose and HAProxy durations) in milliseconds. */
export function durationMs(text: string): number {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  const parts = [...text.trim().matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text.trim()) throw new Error(`not a duration: ${text}`);
  return parts.reduce((sum, [, n, unit]) => sum + Number(n) * units[unit!]!, 0);
}
