import { ConfigError, type Config } from './config';

/**
 * What `npm start` prints when the gateway cannot start: one line naming the variable to fix
 * and the cause, instead of a driver's stack trace. Errors are recognised by their codes (the
 * drivers' and Node's) and, for network failures, by which configured endpoint they name.
 */
export function startupErrorLine(error: unknown, config: Config | null): string {
  if (error instanceof ConfigError) return `configuration error: ${error.message}`;
  const e = (error ?? {}) as ErrnoLike;
  const message = firstLine(error instanceof Error ? error.message : String(error));
  if (config) {
    const known = listenProblem(e, config) ?? databaseProblem(e, message, config) ?? networkProblem(e, message, config) ?? dataDirProblem(e, message, config);
    if (known) return `cannot start: ${known}`;
  }
  return `cannot start: ${message}`;
}

interface ErrnoLike {
  readonly code?: unknown;
  readonly syscall?: unknown;
  readonly hostname?: unknown;
  readonly address?: unknown;
  readonly port?: unknown;
  readonly path?: unknown;
}

const NETWORK_REASONS: Readonly<Record<string, string>> = {
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be resolved (DNS unavailable)',
  ECONNREFUSED: 'connection refused (nothing listens there)',
  ETIMEDOUT: 'no answer in time',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ECONNRESET: 'the connection was reset',
};

function listenProblem(e: ErrnoLike, config: Config): string | null {
  if (e.syscall !== 'listen') return null;
  const where = `${config.host}:${config.port}`;
  if (e.code === 'EADDRINUSE') return `PORT: ${where} is already in use by another process (choose another PORT, or 0 for any free one)`;
  if (e.code === 'EACCES') return `PORT: not allowed to listen on ${where} (ports below 1024 need privileges)`;
  if (e.code === 'EADDRNOTAVAIL') return `HOST: ${config.host} is not an address of this machine`;
  return null;
}

function databaseProblem(e: ErrnoLike, message: string, config: Config): string | null {
  if (!config.databaseUrl) return null;
  if (e.code === 'ER_ACCESS_DENIED_ERROR' || e.code === 'ER_DBACCESS_DENIED_ERROR') return `DATABASE_URL: the server refused the credentials (${message})`;
  if (e.code === 'ER_BAD_DB_ERROR') return `DATABASE_URL: ${message} (create it, or name an existing one)`;
  return null;
}

/** A network failure, attributed to the configured endpoint whose host (and port) it names. */
function networkProblem(e: ErrnoLike, message: string, config: Config): string | null {
  const reason = typeof e.code === 'string' ? NETWORK_REASONS[e.code] : undefined;
  if (!reason) return null;
  // Drivers that re-wrap Node's error (mysql2's promise API) keep its message only: `getaddrinfo ENOTFOUND db`, `connect ECONNREFUSED 10.0.0.5:3306`.
  const said = /(?:getaddrinfo \w+ (\S+))|(?:connect \w+ (\S+):(\d+))/.exec(message);
  const host = typeof e.hostname === 'string' ? e.hostname : typeof e.address === 'string' ? e.address : (said?.[1] ?? said?.[2] ?? null);
  const port = typeof e.port === 'number' ? String(e.port) : (said?.[3] ?? null);
  const endpoints: [string, string | null][] = [
    ['DATABASE_URL', config.databaseUrl],
    ['REDIS_URL', config.live.redisUrl],
    ['QDRANT_URL', config.retrieval.qdrantUrl],
    ['S3_ENDPOINT', config.blobs.s3Endpoint],
    ['OPENAI_BASE_URL', config.openaiBaseUrl],
  ];
  const configured = endpoints.filter((x): x is [string, string] => x[1] !== null).map(([name, url]) => ({ name, url: new URL(url) }));
  const named = configured.find(({ url }) => host !== null && sameHost(url.hostname, host) && (port === null || effectivePort(url) === port));
  // A timeout names no host: with one networked dependency it can only be that one.
  const only = host === null && configured.length === 1 ? configured[0] : undefined;
  const target = named ?? only;
  if (!target) return null;
  return `${target.name}: cannot reach ${target.url.hostname}${target.url.port ? `:${target.url.port}` : ''}: ${reason}`;
}

function dataDirProblem(e: ErrnoLike, message: string, config: Config): string | null {
  const path = typeof e.path === 'string' ? e.path : null;
  const sqliteOpen = typeof e.code === 'string' && /^SQLITE_(CANTOPEN|READONLY|PERM|IOERR)/.test(e.code);
  if (!sqliteOpen && !(path && path.startsWith(config.dataDir))) return null;
  if (!sqliteOpen && !['EACCES', 'EPERM', 'EROFS', 'ENOENT', 'EEXIST', 'ENOTDIR', 'ENOSPC'].includes(String(e.code))) return null;
  return `DATA_DIR: ${config.dataDir} cannot hold the gateway's files (${message}); point DATA_DIR at a writable directory`;
}

const sameHost = (configured: string, reported: string) =>
  configured.replace(/^\[|\]$/g, '') === reported || (configured === 'localhost' && (reported === '127.0.0.1' || reported === '::1'));

function effectivePort(url: URL): string {
  if (url.port) return url.port;
  const defaults: Record<string, string> = { 'mysql:': '3306', 'redis:': '6379', 'rediss:': '6379', 'http:': '80', 'https:': '443' };
  return defaults[url.protocol] ?? '';
}

const firstLine = (text: string) => text.split('\n')[0]?.trim() || 'unknown error';
