import { ConfigError, loadConfig } from '../../src/config';

describe('execute configuration', () => {
  it('defaults to the offline adapter, files under DATA_DIR, and the spec timeouts', () => {
    const c = loadConfig({});
    expect(c.openaiApiKey).toBeNull();
    expect(c.blobs.s3Bucket).toBeNull();
    expect(c.execute).toMatchObject({
      defaultModel: 'gpt-4.1-mini',
      chainTtlSeconds: 30 * 24 * 3600,
      toolResultTimeoutSeconds: 1800,
      turnLeaseSeconds: 120,
      llmMaxRetries: 2,
      maxServerToolRounds: 8,
      maxClientToolRounds: 32,
    });
    expect(c.execute.modelPricing['gpt-4.1-mini']).toEqual({ inputPer1K: 0.0004, cachedInputPer1K: 0.0001, outputPer1K: 0.0016 });
  });

  it('reads the provider, S3 and pricing settings', () => {
    const c = loadConfig({
      OPENAI_API_KEY: ' sk-live ',
      OPENAI_BASE_URL: 'http://proxy.internal:8080/v1',
      OPENAI_MODEL: 'gpt-5-mini',
      S3_BUCKET: 'turns',
      S3_ENDPOINT: 'http://minio:9000',
      MODEL_PRICING: '{"house-model": {"inputPer1K": 0.001, "outputPer1K": 0.002}}',
    });
    expect(c).toMatchObject({ openaiApiKey: 'sk-live', openaiBaseUrl: 'http://proxy.internal:8080/v1' });
    expect(c.execute.defaultModel).toBe('gpt-5-mini');
    expect(c.blobs).toEqual({ s3Bucket: 'turns', s3Endpoint: 'http://minio:9000', s3Region: 'us-east-1', s3ForcePathStyle: true });
    expect(c.execute.modelPricing['house-model']).toEqual({ inputPer1K: 0.001, outputPer1K: 0.002 });
    expect(loadConfig({ S3_BUCKET: 'b', AWS_REGION: 'eu-west-1' }).blobs).toMatchObject({ s3Region: 'eu-west-1', s3ForcePathStyle: false });
  });

  it.each([
    ['LLM_TIMEOUT_MS', 'soon'],
    ['LLM_MAX_RETRIES', '-1'],
    ['OPENAI_CHAIN_TTL_SECONDS', '0'],
    ['TOOL_RESULT_TIMEOUT_SECONDS', '1.5'],
    ['TURN_LEASE_SECONDS', '99999'],
    ['S3_FORCE_PATH_STYLE', 'maybe'],
    ['S3_ENDPOINT', 'minio:9000'],
    ['OPENAI_BASE_URL', 'ftp://x'],
    ['MODEL_PRICING', '{"m": {"inputPer1K": "cheap", "outputPer1K": 1}}'],
    ['MAX_CLIENT_TOOL_ROUNDS', '0'],
    ['MAX_CLIENT_TOOL_ROUNDS', 'many'],
  ])('refuses %s=%s with a message naming it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
  });
});

describe('budgets and database timeouts', () => {
  it('defaults to 60 executes a minute and 10 turns in flight per user, 1000 executes a minute per org, and bounded database waits', () => {
    const c = loadConfig({});
    expect(c.budgets).toEqual({ executesPerMinute: 60, orgExecutesPerMinute: 1000, turnsInFlightPerUser: 10 });
    expect(c).toMatchObject({ dbConnectTimeoutMs: 3000, dbQueryTimeoutMs: 30_000 });
  });

  it('reads every variable; 0 lifts a budget', () => {
    const c = loadConfig({
      RATE_LIMIT_EXECUTES_PER_MINUTE: '0',
      RATE_LIMIT_ORG_EXECUTES_PER_MINUTE: '5000',
      MAX_TURNS_IN_FLIGHT_PER_USER: '3',
      DB_CONNECT_TIMEOUT_MS: '800',
      DB_QUERY_TIMEOUT_MS: '5000',
    });
    expect(c.budgets).toEqual({ executesPerMinute: 0, orgExecutesPerMinute: 5000, turnsInFlightPerUser: 3 });
    expect(c).toMatchObject({ dbConnectTimeoutMs: 800, dbQueryTimeoutMs: 5000 });
  });

  it.each([
    ['RATE_LIMIT_EXECUTES_PER_MINUTE', '-1'],
    ['RATE_LIMIT_ORG_EXECUTES_PER_MINUTE', 'lots'],
    ['MAX_TURNS_IN_FLIGHT_PER_USER', '2.5'],
    ['DB_CONNECT_TIMEOUT_MS', '0'],
    ['DB_QUERY_TIMEOUT_MS', 'forever'],
  ])('refuses %s=%s with a message naming it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
  });
});
