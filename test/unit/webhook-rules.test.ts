import { Webhook } from 'standardwebhooks';
import { isPrivateAddress } from '../../src/webhooks/address-policy';
import { checkEndpointInput, checkEndpointUrl, eventsOf, maskOf, retryAfterMs, verdictOf, WEBHOOK_EVENT_TYPES } from '../../src/webhooks/webhook-rules';
import { signedHeaders } from '../../src/webhooks/webhook-signing';

const DEV = { production: false, allowPrivateNetworks: false };
const PROD = { production: true, allowPrivateNetworks: false };
const LOCAL_DEV = { production: false, allowPrivateNetworks: true };

describe('which addresses a webhook may reach', () => {
  it.each(['127.0.0.1', '127.8.9.10', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fe80::1', 'fd00:ec2::254', 'fc00::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '64:ff9b::a00:1', '224.0.0.1', 'not-an-ip'])(
    'refuses %s',
    (address) => expect(isPrivateAddress(address)).toBe(true),
  );

  it.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808'])('allows %s', (address) =>
    expect(isPrivateAddress(address)).toBe(false),
  );
});

describe('endpoint URLs', () => {
  it('wants https, allowing http for localhost outside production only', () => {
    expect(checkEndpointUrl('https://hooks.example.com/in', PROD).href).toBe('https://hooks.example.com/in');
    expect(() => checkEndpointUrl('http://hooks.example.com/in', DEV)).toThrow(/https/);
    expect(() => checkEndpointUrl('http://localhost:8080/in', PROD)).toThrow(/https:\/\/ in production/);
    expect(checkEndpointUrl('http://localhost:8080/in', LOCAL_DEV).host).toBe('localhost:8080');
    expect(checkEndpointUrl('http://127.0.0.1:8080/in', LOCAL_DEV).host).toBe('127.0.0.1:8080');
  });

  it('refuses private literals unless private networks are allowed, and credentials and fragments always', () => {
    for (const url of ['https://127.0.0.1/', 'https://169.254.169.254/', 'https://[::1]/', 'http://localhost/', 'https://0x7f.1/', 'https://2130706433/']) {
      expect(() => checkEndpointUrl(url, DEV)).toThrow(/private/);
    }
    expect(checkEndpointUrl('https://10.0.0.1/', LOCAL_DEV).hostname).toBe('10.0.0.1');
    expect(() => checkEndpointUrl('https://user:pw@hooks.example.com/', DEV)).toThrow(/credentials/);
    expect(() => checkEndpointUrl('https://hooks.example.com/#x', DEV)).toThrow(/fragment/);
  });

  it('refuses unknown or missing events and keeps the rest as a mask', () => {
    expect(() => checkEndpointInput({ url: 'https://a.example/', events: ['TURN_EXPLODED'] }, DEV)).toThrow(/unknown webhook events: TURN_EXPLODED/);
    expect(() => checkEndpointInput({ url: 'https://a.example/', events: [] }, DEV)).toThrow(/at least one/);
    const checked = checkEndpointInput({ url: 'https://a.example/', events: ['SESSION_CREATED', 'TURN_FAILED'], description: '  ' }, DEV);
    expect(eventsOf(checked.eventMask)).toEqual(['TURN_FAILED', 'SESSION_CREATED']);
    expect(checked.description).toBeNull();
    expect(eventsOf(maskOf(WEBHOOK_EVENT_TYPES))).toEqual([...WEBHOOK_EVENT_TYPES]);
  });
});

describe('what follows an attempt', () => {
  const policy = { baseDelayMs: 1000, maxDelayMs: 60_000 };
  const now = new Date('2025-01-01T00:00:00Z');
  const until = new Date(now.getTime() + 24 * 3600 * 1000);
  const retryable = { kind: 'retryable', statusCode: 503, error: 'HTTP 503', retryAfterMs: null } as const;

  it('backs off exponentially with jitter between half and all of the doubled delay, capped', () => {
    const waits = (random: number) => [1, 2, 3, 4, 10].map((n) => {
      const v = verdictOf(retryable, n, until, now, policy, () => random);
      return v.status === 'PENDING' ? v.nextAttemptAt.getTime() - now.getTime() : -1;
    });
    expect(waits(1)).toEqual([1000, 2000, 4000, 8000, 60_000]);
    expect(waits(0)).toEqual([500, 1000, 2000, 4000, 30_000]);
  });

  it('waits at least what Retry-After asks, and fails once the window is spent', () => {
    const asked = verdictOf({ ...retryable, statusCode: 429, retryAfterMs: 30_000 }, 1, until, now, policy, () => 0);
    expect(asked).toEqual({ status: 'PENDING', nextAttemptAt: new Date(now.getTime() + 30_000) });
    expect(verdictOf(retryable, 5, new Date(now.getTime() + 1000), now, policy)).toEqual({ status: 'FAILED', disableEndpoint: false });
    expect(verdictOf({ kind: 'gone', statusCode: 410 }, 1, until, now, policy)).toEqual({ status: 'FAILED', disableEndpoint: true });
    expect(verdictOf({ kind: 'rejected', statusCode: 400, error: 'HTTP 400' }, 1, until, now, policy)).toEqual({ status: 'FAILED', disableEndpoint: false });
    expect(verdictOf({ kind: 'delivered', statusCode: 200 }, 3, until, now, policy)).toEqual({ status: 'SUCCEEDED' });
  });

  it('reads Retry-After as seconds or as a date', () => {
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs('Wed, 01 Jan 2025 00:01:00 GMT', now)).toBe(60_000);
    expect(retryAfterMs('soon', now)).toBeNull();
    expect(retryAfterMs(undefined, now)).toBeNull();
  });
});

describe('signatures', () => {
  it('verify with the standardwebhooks package, with either secret during a rotation overlap', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const previous = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';
    const at = new Date();
    const body = JSON.stringify({ type: 'TURN_COMPLETED' });
    const headers = signedHeaders('msg_1', body, { secret, previousSecret: previous, previousSecretExpiresAt: new Date(at.getTime() + 1000) }, at);
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const s of [secret, previous]) expect(new Webhook(s).verify(body, headers)).toEqual({ type: 'TURN_COMPLETED' });
    const later = signedHeaders('msg_1', body, { secret, previousSecret: previous, previousSecretExpiresAt: at }, at);
    expect(() => new Webhook(previous).verify(body, later)).toThrow(/No matching signature/);
  });
});
