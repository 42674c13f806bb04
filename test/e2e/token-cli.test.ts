import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { SharedSecretTokenVerifier } from '../../src/auth/shared-secret.adapter';
import { authenticate } from '../../src/server/auth';

const root = resolve(__dirname, '../..');
const run = promisify(execFile);
const SECRET = 'token-cli-secret-token-cli-secret-token-cli';

/** `npm run token` as built: the token alone, no dashboard link that would carry it (issue 36). */
describe('npm run token', () => {
  it('prints the token alone on stdout, no address that carries it, and one the gateway accepts', async () => {
    const { stdout, stderr } = await run(process.execPath, ['dist/cli/token.js', '--user', 'user-2', '--org', 'acme', '--admin'], {
      cwd: root,
      env: { ...process.env, JWT_SECRET: SECRET, PORT: '4000' },
    });
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(`${stdout}${stderr}`).not.toMatch(/#token=|\?token=|https?:\/\/\S*eyJ/);
    expect((await authenticate(`Bearer ${lines[0]}`, new SharedSecretTokenVerifier(SECRET))).caller).toMatchObject({ userId: 'user-2', orgId: 'acme', roles: ['admin'] });
  });

  it('tells a person at a terminal where to paste it, still without it in the address', async () => {
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const command = [process.execPath, 'dist/cli/token.js', '--user', 'user-2', '--org', 'acme'].map(quote).join(' ');
    const { stdout: screen } = await run('script', ['--quiet', '--return', '--command', command, '/dev/null'], {
      cwd: root,
      env: { ...process.env, JWT_SECRET: SECRET, PORT: '4123' },
    });
    expect(screen).toContain('Paste this token into the sign-in form at http://localhost:4123/dashboard ');
    expect(screen).not.toMatch(/dashboard\S*eyJ|#token=/);
  });
});
