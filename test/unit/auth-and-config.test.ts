import jwt from 'jsonwebtoken';
import { ConfigError, DEVELOPMENT_JWT_SECRET, loadConfig } from '../../src/config';
import { SharedSecretTokenVerifier } from '../../src/auth/shared-secret.adapter';
import { authenticate, issueToken } from '../../src/server/auth';

const SECRET = 'unit-secret';
const VERIFIER = new SharedSecretTokenVerifier(SECRET);

describe('authenticate', () => {
  it('turns a valid token into the caller it names, with its expiry', async () => {
    const token = issueToken({ userId: 'u1', userName: 'User 1', orgId: 'acme', orgName: 'Acme', roles: ['admin'] }, SECRET, 60);
    const { caller, expiresAt } = await authenticate(`Bearer ${token}`, VERIFIER);
    expect(caller).toEqual({ userId: 'u1', userName: 'User 1', orgId: 'acme', orgName: 'Acme', roles: ['admin'] });
    expect(expiresAt.getTime()).toBeGreaterThan(Date.now());
  });

  it('defaults display names to the ids', async () => {
    const token = jwt.sign({ org: 'acme' }, SECRET, { subject: 'u1', expiresIn: 60 });
    expect((await authenticate(`bearer ${token}`, VERIFIER)).caller).toMatchObject({ userName: 'u1', orgName: 'acme', roles: [] });
  });

  it.each([
    ['no header', undefined],
    ['another scheme', `Basic ${Buffer.from('a:b').toString('base64')}`],
    ['HS512', `Bearer ${jwt.sign({ sub: 'u', org: 'o' }, SECRET, { algorithm: 'HS512', expiresIn: 60 })}`],
    ['no exp', `Bearer ${jwt.sign({ sub: 'u', org: 'o' }, SECRET)}`],
    ['roles not strings', `Bearer ${jwt.sign({ sub: 'u', org: 'o', roles: [1] }, SECRET, { expiresIn: 60 })}`],
    ['an empty sub', `Bearer ${jwt.sign({ sub: '', org: 'o' }, SECRET, { expiresIn: 60 })}`],
    ['an over-long org', `Bearer ${jwt.sign({ sub: 'u', org: 'o'.repeat(65) }, SECRET, { expiresIn: 60 })}`],
    ['an org with a lone high surrogate', `Bearer ${jwt.sign({ sub: 'u', org: 'corp\ud800' }, SECRET, { expiresIn: 60 })}`],
    ['an org with a lone low surrogate', `Bearer ${jwt.sign({ sub: 'u', org: 'corp\udfff' }, SECRET, { expiresIn: 60 })}`],
    ['a sub with a lone surrogate', `Bearer ${jwt.sign({ sub: 'user-2\udc00', org: 'o' }, SECRET, { expiresIn: 60 })}`],
    ['a sub with a control character', `Bearer ${jwt.sign({ sub: 'user\u00002', org: 'o' }, SECRET, { expiresIn: 60 })}`],
    ['an org with a newline', `Bearer ${jwt.sign({ sub: 'u', org: 'acme\n' }, SECRET, { expiresIn: 60 })}`],
    ['an ill-formed name', `Bearer ${jwt.sign({ sub: 'u', org: 'o', name: 'Eve\ud83d' }, SECRET, { expiresIn: 60 })}`],
    ['an ill-formed org name', `Bearer ${jwt.sign({ sub: 'u', org: 'o', orgName: '\udc00Corp' }, SECRET, { expiresIn: 60 })}`],
    ['an ill-formed role', `Bearer ${jwt.sign({ sub: 'u', org: 'o', roles: ['admin\ud800'] }, SECRET, { expiresIn: 60 })}`],
  ])('refuses %s as UNAUTHENTICATED', async (_what, header) => {
    await expect(authenticate(header, VERIFIER)).rejects.toThrow(expect.objectContaining({ code: 'UNAUTHENTICATED' }));
  });

  it('accepts U+FFFD, emoji and other well-formed text in ids and names', async () => {
    const token = jwt.sign({ sub: 'usér-😀', org: 'corp\uFFFD', name: 'Zoë 😀', orgName: 'Corp\uFFFD' }, SECRET, { expiresIn: 60 });
    expect((await authenticate(`Bearer ${token}`, VERIFIER)).caller).toMatchObject({ userId: 'usér-😀', orgId: 'corp\uFFFD', userName: 'Zoë 😀' });
  });

  it('says what is wrong with an ill-formed id claim', async () => {
    const token = jwt.sign({ sub: 'u', org: 'corp\ud800' }, SECRET, { expiresIn: 60 });
    await expect(authenticate(`Bearer ${token}`, VERIFIER)).rejects.toThrow('token claim "org" must be well-formed Unicode');
  });

  it('says when a token expired', async () => {
    const token = issueToken({ userId: 'u', orgId: 'o' }, SECRET, 1);
    await expect(authenticate(`Bearer ${token}`, VERIFIER, new Date(Date.now() + 5000))).rejects.toThrow('token expired');
  });

  it('refuses a token it accepted before once that token expires, or under another secret', async () => {
    const token = issueToken({ userId: 'u', orgId: 'o' }, SECRET, 2);
    expect((await authenticate(`Bearer ${token}`, VERIFIER)).caller.userId).toBe('u');
    expect((await authenticate(`Bearer ${token}`, VERIFIER)).caller.userId).toBe('u');
    await expect(authenticate(`Bearer ${token}`, new SharedSecretTokenVerifier('another-secret'))).rejects.toThrow('invalid token');
    await expect(authenticate(`Bearer ${token}`, VERIFIER, new Date(Date.now() + 5000))).rejects.toThrow('token expired');
  });
});

describe('loadConfig', () => {
  it('runs on embedded defaults with no environment at all', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 4000, host: '0.0.0.0', databaseUrl: null, jwtSecret: DEVELOPMENT_JWT_SECRET, jwtSecretIsDefault: true });
    expect(c.dataDir).toMatch(/data$/);
  });

  it('refuses production without a real JWT secret', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(loadConfig({ NODE_ENV: 'production', JWT_SECRET: 's'.repeat(32) }).isProduction).toBe(true);
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'postgres://x'],
    ['DATABASE_URL', 'mysql://root@localhost/gw?socketPath=mysqld.sock'],
    ['NODE_ENV', 'staging'],
    ['GRAPHQL_MAX_DEPTH', '0'],
    ['GRAPHQL_MAX_COST', '-5'],
    ['GRAPHQL_MAX_RESPONSE_ITEMS', '1.5'],
  ])('names %s when its value %p does not parse', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
  });

  it('reads the cost and response limits', () => {
    expect(loadConfig({}).limits).toMatchObject({ maxCost: 30_000, maxResponseItems: 50_000 });
    expect(loadConfig({ GRAPHQL_MAX_COST: '1000', GRAPHQL_MAX_RESPONSE_ITEMS: '10' }).limits).toMatchObject({ maxCost: 1000, maxResponseItems: 10 });
  });

  it('accepts mariadb:// as a MySQL URL', () => {
    expect(loadConfig({ DATABASE_URL: 'mariadb://root@db:3306/gw' }).databaseUrl).toBe('mysql://root@db:3306/gw');
  });
});
