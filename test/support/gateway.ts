import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config } from '../../src/config';
import { createLogger, type Logger } from '../../src/logger';
import { createGateway, type Gateway } from '../../src/main';
import { issueToken, type TokenClaims } from '../../src/server/auth';
import { createMysqlDatabase, dropMysqlDatabase } from './db';

export const TEST_SECRET = 'test-secret-that-is-long-enough-for-production-mode';

export interface GraphQLResponse<T = Record<string, unknown>> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: { data?: T | null; errors?: { message: string; path?: string[]; extensions?: Record<string, unknown> }[] };
}

export interface TestGateway {
  readonly gateway: Gateway;
  readonly url: string;
  /** Every SQL statement the gateway ran since the last reset (when started with countQueries). */
  readonly statements: string[];
  token(claims: Partial<TokenClaims> & { userId: string }, ttlSeconds?: number): string;
  gql<T = Record<string, unknown>>(token: string | null, query: string, variables?: Record<string, unknown>): Promise<GraphQLResponse<T>>;
  close(): Promise<void>;
}

export interface TestGatewayOptions {
  readonly mysql?: boolean;
  readonly env?: Record<string, string>;
  readonly logger?: Logger;
}

/** A real gateway (composition root, Apollo, HTTP) on a free port with its own database. */
export async function startTestGateway(options: TestGatewayOptions = {}): Promise<TestGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-gateway-'));
  const databaseUrl = options.mysql ? await createMysqlDatabase() : null;
  const config: Config = loadConfig({
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    JWT_SECRET: TEST_SECRET,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...options.env,
  });
  const statements: string[] = [];
  const gateway = await createGateway(config, options.logger ?? createLogger(process.env.LOG_LEVEL ?? 'silent'), {
    onQuery: (sql) => statements.push(sql),
  });
  const url = await gateway.listen();
  return {
    gateway,
    url,
    statements,
    token: (claims, ttl) => issueToken({ orgId: 'acme', ...claims }, TEST_SECRET, ttl),
    async gql(token, query, variables) {
      const res = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify({ query, variables }),
      });
      return { status: res.status, headers: res.headers, body: (await res.json()) as GraphQLResponse<never>['body'] };
    },
    async close() {
      await gateway.close();
      if (databaseUrl) await dropMysqlDatabase(databaseUrl);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
