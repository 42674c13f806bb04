import { serverAudits } from 'graphql-http';
import { startGateway, type TestGateway } from '../support/testkit';

let t: TestGateway;
let token: string;

beforeAll(async () => {
  t = await startGateway();
  token = t.token({ userId: 'auditor' });
});
afterAll(() => t.close());

const authorised: typeof fetch = (input, init) => {
  const headers = new Headers(init?.headers);
  headers.set('authorization', `Bearer ${token}`);
  return fetch(input, { ...init, headers });
};

describe('GraphQL over HTTP audit (graphql-http serverAudits)', () => {
  const audits = serverAudits({ url: () => `${t.url}/graphql`, fetchFn: authorised });
  it.each(audits.filter((a) => a.name.startsWith('MUST')).map((a) => [a.name, a] as const))('%s', async (_name, audit) => {
    const result = await audit.fn();
    expect(result.status === 'ok' ? 'ok' : `${result.status}: ${'reason' in result ? result.reason : ''}`).toBe('ok');
  });
});
