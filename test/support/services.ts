/**
 * Which real services this run may use. test/run.mjs probes them once and passes the
 * verdict down; a suite that needs a missing one is skipped with its reason printed, and
 * with CI=true the runner fails before jest starts instead.
 */
export const mysqlUrl: string | null = process.env.GATEWAY_TEST_MYSQL_OK === '1' ? (process.env.TEST_MYSQL_URL ?? null) : null;
/** The Unix socket of that server, when it runs on this machine (DATABASE_URL's ?socketPath=). */
export const mysqlSocket: string | null = (mysqlUrl && process.env.GATEWAY_TEST_MYSQL_SOCKET) || null;
export const redisUrl: string | null = process.env.GATEWAY_TEST_REDIS_OK === '1' ? (process.env.TEST_REDIS_URL ?? null) : null;
/** Chromium for the browser suites (Debian's package: `apt-get install chromium`). */
export const chromiumPath: string | null =
  process.env.GATEWAY_TEST_BROWSER_OK === '1' ? (process.env.TEST_CHROMIUM_PATH ?? '/usr/bin/chromium') : null;
/** Debian's haproxy, for the proxy configuration in deploy/haproxy (`apt-get install haproxy`). */
export const haproxyPath: string | null =
  process.env.GATEWAY_TEST_HAPROXY_OK === '1' ? (process.env.TEST_HAPROXY_PATH ?? '/usr/sbin/haproxy') : null;
/** kubectl, whose built-in kustomize renders deploy/kubernetes offline. */
export const kubectlPath: string | null = process.env.GATEWAY_TEST_KUBECTL_OK === '1' ? (process.env.TEST_KUBECTL_PATH ?? 'kubectl') : null;

const ci = /^(1|true)$/i.test(process.env.CI ?? '');

/**
 * `describe` when the service is reachable. Otherwise a skipped block whose title says why,
 * except under CI=true (even when jest is run directly, without test/run.mjs): then the block
 * fails, so a missing service can never pass as green.
 */
function describeWith(service: string, location: string | null, title: string, body: () => void): void {
  if (location) return describe(title, body);
  if (ci) {
    describe(title, () => {
      it(`needs ${service}`, () => {
        throw new Error(`CI=true but ${service} is not reachable (run the tests through npm test / .ci/run)`);
      });
    });
    return;
  }
  describe.skip(`${title} [skipped: no ${service}]`, body);
}

export const describeWithMysql = (title: string, body: () => void): void =>
  describeWith('MySQL at TEST_MYSQL_URL', mysqlUrl, title, body);

export const describeWithMysqlSocket = (title: string, body: () => void): void =>
  describeWith("MySQL's Unix socket on this machine", mysqlSocket, title, body);

export const describeWithRedis = (title: string, body: () => void): void =>
  describeWith('Redis at TEST_REDIS_URL', redisUrl, title, body);

export const describeWithBrowser = (title: string, body: () => void): void =>
  describeWith('Chromium at TEST_CHROMIUM_PATH', chromiumPath, title, body);

export const describeWithHaproxy = (title: string, body: () => void): void =>
  describeWith('HAProxy at TEST_HAPROXY_PATH', haproxyPath, title, body);

export const describeWithKubectl = (title: string, body: () => void): void =>
  describeWith('kubectl at TEST_KUBECTL_PATH', kubectlPath, title, body);
