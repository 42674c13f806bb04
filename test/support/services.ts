/**
 * Which real services this run may use. test/run.mjs probes them once and passes the
 * verdict down; a suite that needs a missing one is skipped with its reason printed, and
 * with CI=true the runner fails before jest starts instead.
 */
export const mysqlUrl: string | null = process.env.GATEWAY_TEST_MYSQL_OK === '1' ? (process.env.TEST_MYSQL_URL ?? null) : null;
export const redisUrl: string | null = process.env.GATEWAY_TEST_REDIS_OK === '1' ? (process.env.TEST_REDIS_URL ?? null) : null;

/** `describe` when MySQL is reachable, otherwise a skipped block whose title says why. */
export const describeWithMysql = (title: string, body: () => void): void =>
  mysqlUrl ? describe(title, body) : describe.skip(`${title} [skipped: no MySQL at TEST_MYSQL_URL]`, body);

export const describeWithRedis = (title: string, body: () => void): void =>
  redisUrl ? describe(title, body) : describe.skip(`${title} [skipped: no Redis at TEST_REDIS_URL]`, body);
