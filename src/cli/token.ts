import { parseArgs } from 'node:util';
import { loadConfig } from '../config';
import { issueToken } from '../server/auth';

/**
 * `npm run token -- --user u1 --org acme [--admin]`: prints a bearer token for local use,
 * and nothing else on stdout: no dashboard link carries it (see src/web/token.ts).
 */
const { values } = parseArgs({
  options: {
    user: { type: 'string' },
    name: { type: 'string' },
    org: { type: 'string' },
    'org-name': { type: 'string' },
    admin: { type: 'boolean', default: false },
    role: { type: 'string', multiple: true },
    ttl: { type: 'string', default: '43200' },
  },
});

if (!values.user || !values.org) {
  console.error('usage: npm run token -- --user <id> --org <id> [--name "User 1"] [--org-name Acme] [--admin] [--role r]... [--ttl seconds]');
  process.exit(2);
}
const ttl = Number(values.ttl);
if (!Number.isInteger(ttl) || ttl <= 0) {
  console.error('--ttl must be a positive number of seconds');
  process.exit(2);
}
const roles = [...(values.role ?? []), ...(values.admin ? ['admin'] : [])];
const config = loadConfig();
if (!config.auth.acceptSharedSecret) {
  console.error('This gateway takes tokens from its identity provider (AUTH_ISSUER / AUTH_JWKS_URL) and refuses HS256 tokens unless JWT_SECRET is set: this token will be refused.');
}
// Only the token goes to stdout (for TOKEN=$(npm run --silent token ...)); a person at a terminal also learns where to paste it.
if (process.stderr.isTTY) {
  console.error(`Paste this token into the sign-in form at http://localhost:${config.port}/dashboard (never put it in an address: browsers keep addresses in their history).`);
}
console.log(
  issueToken(
    {
      userId: values.user,
      userName: values.name ?? defaultName(values.user),
      orgId: values.org,
      orgName: values['org-name'] ?? values.org,
      roles,
    },
    config.jwtSecret,
    ttl,
  ),
);

/** user-3 -> "User 3", the names the seed gives its users. */
function defaultName(userId: string): string {
  const m = /^user-(\d+)$/.exec(userId);
  return m ? `User ${m[1]}` : userId;
}
