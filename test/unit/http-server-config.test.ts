import { ConfigError, loadConfig } from '../../src/config';

describe('HTTP server timeouts (issue 36)', () => {
  it('default to 10 s for headers and 30 s for a request', () => {
    expect(loadConfig({}).http).toEqual({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000 });
  });

  it('read HTTP_HEADERS_TIMEOUT_MS and HTTP_REQUEST_TIMEOUT_MS', () => {
    expect(loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '2000', HTTP_REQUEST_TIMEOUT_MS: '5000' }).http).toEqual({ headersTimeoutMs: 2_000, requestTimeoutMs: 5_000 });
  });

  it('refuse a headers timeout longer than the request timeout (node:http would not start)', () => {
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '20000', HTTP_REQUEST_TIMEOUT_MS: '10000' })).toThrow(ConfigError);
    expect(() => loadConfig({ HTTP_REQUEST_TIMEOUT_MS: 'soon' })).toThrow(ConfigError);
  });
});
