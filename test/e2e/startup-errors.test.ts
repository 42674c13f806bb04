import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../support/server-process';
import { describeWithMysql, mysqlUrl } from '../support/services';

/** `node dist/main.js` (what `npm start` runs) with only `env`; what it printed and how it ended. */
function start(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['dist/main.js'], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((done) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      done({ code, stderr });
    });
  });
}

/** One line, naming the variable, exit code 1, no stack trace. */
async function expectOneLine(env: Record<string, string>, line: RegExp): Promise<void> {
  const { code, stderr } = await start(env);
  expect({ code, lines: stderr.trimEnd().split('\n') }).toEqual({ code: 1, lines: [expect.stringMatching(line)] });
}

const freePort = async (): Promise<number> => {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
};

describe('start-up errors are one clear line and exit code 1', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'gw-startup-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('a value that does not parse names its variable', async () => {
    await expectOneLine({ DATA_DIR: dataDir, PORT: 'abc' }, /^configuration error: PORT must be an integer between 0 and 65535, got "abc"$/);
  });

  it('a DATABASE_URL without a database name says so (not an ORM hint about ormconfig.json)', async () => {
    await expectOneLine({ DATA_DIR: dataDir, DATABASE_URL: 'mysql://root@127.0.0.1:3306' }, /^configuration error: DATABASE_URL must name a database/);
  });

  it('an unknown database host, and a port where nothing listens, name DATABASE_URL and the cause', async () => {
    await expectOneLine({ DATA_DIR: dataDir, DATABASE_URL: 'mysql://root@no-such-host.invalid:3306/db' }, /^cannot start: DATABASE_URL: cannot reach no-such-host\.invalid:3306: (no such host|the host name could not be resolved)/);
    const port = await freePort();
    await expectOneLine({ DATA_DIR: dataDir, DATABASE_URL: `mysql://root@127.0.0.1:${port}/db` }, new RegExp(`^cannot start: DATABASE_URL: cannot reach 127\\.0\\.0\\.1:${port}: connection refused`));
  });

  it('a DATA_DIR that cannot hold the embedded database names DATA_DIR', async () => {
    const file = join(dataDir, 'not-a-directory');
    writeFileSync(file, 'x');
    await expectOneLine({ DATA_DIR: file }, /^cannot start: DATA_DIR: .*not-a-directory cannot hold the gateway's files/);
    await expectOneLine({ DATA_DIR: join(file, 'below') }, /^cannot start: DATA_DIR: .*below cannot hold the gateway's files/);
  });

  it('a port in use names PORT', async () => {
    const taken: Server = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as { port: number }).port;
    try {
      await expectOneLine({ DATA_DIR: join(dataDir, 'port'), PORT: String(port) }, new RegExp(`^cannot start: PORT: 127\\.0\\.0\\.1:${port} is already in use`));
    } finally {
      await new Promise((r) => taken.close(r));
    }
  });

  it('LOG_LEVEL=debug adds the stack trace below the line', async () => {
    const port = await freePort();
    const { code, stderr } = await start({ DATA_DIR: dataDir, LOG_LEVEL: 'debug', DATABASE_URL: `mysql://root@127.0.0.1:${port}/db` });
    expect(code).toBe(1);
    expect(stderr.split('\n')[0]).toMatch(/^cannot start: DATABASE_URL: cannot reach/);
    expect(stderr).toMatch(/\n\s+at /);
  });
});

describeWithMysql('start-up errors against a real MySQL/MariaDB', () => {
  const base = () => new URL(mysqlUrl!);

  it('wrong credentials name DATABASE_URL and what the server said', async () => {
    const url = base();
    url.password = 'certainly-not-the-password';
    url.username = 'no_such_user_gw';
    await expectOneLine({ DATA_DIR: tmpdir(), DATABASE_URL: url.toString() }, /^cannot start: DATABASE_URL: the server refused the credentials \(Access denied for user 'no_such_user_gw'/);
  });

  it('a database that does not exist names DATABASE_URL', async () => {
    const url = base();
    url.pathname = '/gw_no_such_database_x';
    await expectOneLine({ DATA_DIR: tmpdir(), DATABASE_URL: url.toString() }, /^cannot start: DATABASE_URL: Unknown database 'gw_no_such_database_x' \(create it/);
  });
});
