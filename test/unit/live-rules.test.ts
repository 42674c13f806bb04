import { parse, type ExecutionArgs } from 'graphql';
import { loadConfig } from '../../src/config';
import { parseEventId } from '../../src/domain/event-id';
import type { SessionRecord } from '../../src/domain/session';
import { matchesSessionFilter } from '../../src/domain/session-filter';
import { decodeOutputDelta, decodeStatusEvent, encodeOutputDelta, encodeStatusEvent } from '../../src/events/event-wire';
import { OutputBuffer } from '../../src/events/output-buffer';
import type { TurnStatusEvent } from '../../src/events/turn-events';
import { operationKey, visibilityOf } from '../../src/graphql/live/subscription-executor';
import { gatewaySchema } from '../../src/graphql/schema';
import { admin, user } from '../support/testkit/users';

const session = (overrides: Partial<SessionRecord> = {}): SessionRecord => ({
  id: 's1',
  name: 'Refactor Billing',
  key: null,
  description: null,
  isPublic: false,
  isDraft: false,
  isDeleted: false,
  category: null,
  ownerOrganization: { id: 'acme', text: 'Acme' },
  ownerUser: { id: 'owner', text: 'Owner' },
  creationDate: new Date('2026-01-01T00:00:00Z'),
  lastUpdatedDate: new Date('2026-01-10T00:00:00Z'),
  agentContextId: 'ac1',
  conversationContextId: 'cc1',
  workspaceId: 'ws',
  repo: 'acme/api',
  defaultLanguage: null,
  turnCount: 2,
  lastTurnStatus: 'COMPLETED',
  lastTurnDate: new Date('2026-01-10T00:00:00Z'),
  usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, estimatedCostUsd: null, isEstimated: false },
  ...overrides,
});

describe('the session filter of sessionActivity', () => {
  const participants = [
    { id: 'owner', text: 'Owner' },
    { id: 'helper', text: 'Helper' },
  ];

  it.each([
    [{}, true],
    [{ participantId: 'helper' }, true],
    [{ participantId: 'owner' }, true],
    [{ participantId: 'stranger' }, false],
    [{ ownerUserId: 'owner' }, true],
    [{ ownerUserId: 'helper' }, false],
    [{ agentContextId: 'ac2' }, false],
    [{ conversationContextId: 'cc1' }, true],
    [{ workspaceId: 'other' }, false],
    [{ repo: 'acme/api' }, true],
    [{ lastTurnStatus: 'PENDING' as const }, false],
    [{ updatedAfter: new Date('2026-01-10T00:00:00Z') }, false],
    [{ updatedAfter: new Date('2026-01-09T00:00:00Z') }, true],
    [{ updatedBefore: new Date('2026-01-10T00:00:00Z') }, false],
    [{ search: 'BILL' }, true],
    [{ search: 'invoice' }, false],
    [{ search: '' }, true],
    [{ participantId: 'helper', repo: 'acme/web' }, false],
  ])('%j -> %s', (filter, expected) => {
    expect(matchesSessionFilter(session(), participants, filter)).toBe(expected);
  });

  it('finds a word of the name with or without its accents, as the full-text indexes do', () => {
    const cafe = session({ name: 'Café crème' });
    for (const search of ['cafe', 'CAFÉ', 'creme']) expect(matchesSessionFilter(cafe, participants, { search })).toBe(true);
    expect(matchesSessionFilter(session({ name: 'cafe latte' }), participants, { search: 'café' })).toBe(true);
    expect(matchesSessionFilter(cafe, participants, { search: 'cafes' })).toBe(false);
  });

  it('leaves deleted sessions out unless asked for', () => {
    expect(matchesSessionFilter(session({ isDeleted: true }), participants, {})).toBe(false);
    expect(matchesSessionFilter(session({ isDeleted: true }), participants, { includeDeleted: true })).toBe(true);
  });
});

describe('event ids', () => {
  it.each([
    ['0', 0],
    ['42', 42],
    ['9007199254740991', Number.MAX_SAFE_INTEGER],
  ])('parses %s', (raw, id) => expect(parseEventId(raw)).toBe(id));

  it.each(['', '-1', '01', '1.0', '1e3', ' 1', 'abc', '99999999999999999'])('refuses %j as BAD_USER_INPUT', (raw) => {
    expect(() => parseEventId(raw)).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' }));
  });
});

describe('the Redis wire format', () => {
  const event: TurnStatusEvent = {
    eventId: 7,
    orgId: 'acme',
    sessionId: 's1',
    turnId: 't1',
    sequenceNumber: 3,
    previousStatus: 'PENDING',
    status: 'COMPLETED',
    statusTimeStamp: new Date('2026-02-03T04:05:06.789Z'),
    createdByUser: { id: 'u1', text: 'User 1' },
  };

  it('round-trips status events and deltas', () => {
    expect(decodeStatusEvent(encodeStatusEvent(event))).toEqual(event);
    expect(decodeStatusEvent(encodeStatusEvent({ ...event, previousStatus: null }))).toEqual({ ...event, previousStatus: null });
    const delta = { orgId: 'acme', sessionId: 's1', turnId: 't1', index: 0, textDelta: 'héllo\n' };
    expect(decodeOutputDelta(encodeOutputDelta(delta))).toEqual(delta);
  });

  it.each([
    'not json',
    '[]',
    JSON.stringify({ ...event, eventId: '7' }),
    JSON.stringify({ ...event, eventId: 0 }),
    JSON.stringify({ ...event, status: 'DONE' }),
    JSON.stringify({ ...event, previousStatus: 'DONE' }),
    JSON.stringify({ ...event, statusTimeStamp: 'yesterday' }),
    JSON.stringify({ ...event, createdByUser: null }),
    JSON.stringify({ ...event, orgId: '' }),
  ])('drops malformed status event %s', (text) => {
    expect(decodeStatusEvent(text)).toBeNull();
  });

  it('drops malformed deltas', () => {
    expect(decodeOutputDelta(JSON.stringify({ orgId: 'a', sessionId: 's', turnId: 't', index: -1, textDelta: 'x' }))).toBeNull();
    expect(decodeOutputDelta(JSON.stringify({ orgId: 'a', sessionId: 's', turnId: 't', index: 0 }))).toBeNull();
  });
});

describe('the in-process output buffer', () => {
  const delta = (turnId: string, index: number, textDelta: string) => ({ orgId: 'acme', sessionId: 's', turnId, index, textDelta });

  it('keeps each turn in order and reads from an index on', () => {
    const buffer = new OutputBuffer();
    ['a', 'b', 'c'].forEach((text, i) => buffer.append(delta('t1', i, text)));
    expect(buffer.read('t1', 0).map((d) => d.textDelta)).toEqual(['a', 'b', 'c']);
    expect(buffer.read('t1', 2).map((d) => d.textDelta)).toEqual(['c']);
    expect(buffer.read('unknown', 0)).toEqual([]);
  });

  it('drops the least recently written turns past its size bound, never the one being written', () => {
    const buffer = new OutputBuffer({ maxTotalChars: 10, streamingTtlMs: 60_000, endedTtlMs: 1_000 });
    buffer.append(delta('old', 0, '12345'));
    buffer.append(delta('new', 0, '12345'));
    buffer.append(delta('new', 1, '678'));
    expect(buffer.read('old', 0)).toEqual([]);
    expect(buffer.read('new', 0)).toHaveLength(2);
    buffer.append(delta('huge', 0, 'x'.repeat(50)));
    expect(buffer.read('huge', 0)).toHaveLength(1);
    expect(buffer.size).toBe(1);
  });

  it('expires turns: long while streaming, shortly after the stream ended', () => {
    let now = 0;
    const buffer = new OutputBuffer({ maxTotalChars: 1_000, streamingTtlMs: 60_000, endedTtlMs: 1_000 }, () => now);
    buffer.append(delta('streaming', 0, 'a'));
    buffer.append(delta('ended', 0, 'b'));
    buffer.end('ended');
    now = 1_500;
    expect(buffer.read('ended', 0)).toEqual([]);
    expect(buffer.read('streaming', 0)).toHaveLength(1);
    now = 61_000;
    expect(buffer.read('streaming', 0)).toEqual([]);
  });

  it('never serves an expired turn, however soon after its expiry it is read or written again', () => {
    let now = 0;
    const buffer = new OutputBuffer({ maxTotalChars: 1_000, streamingTtlMs: 200, endedTtlMs: 100 }, () => now);
    buffer.append(delta('ended', 0, 'a'));
    buffer.append(delta('quiet', 0, 'b'));
    buffer.end('ended');
    now = 150;
    expect(buffer.read('ended', 0)).toEqual([]);
    now = 250;
    buffer.append(delta('quiet', 1, 'c'));
    expect(buffer.read('quiet', 0).map((d) => d.textDelta)).toEqual(['c']);
  });
});

describe('which subscribers share one execution', () => {
  const args = (query: string, variableValues: Record<string, unknown> = {}, operationName?: string): ExecutionArgs => ({
    schema: gatewaySchema(),
    document: parse(query),
    variableValues,
    ...(operationName ? { operationName } : {}),
  });
  const STATUS = 'subscription S($id: ID!, $after: ID) { turnStatusChanged(sessionId: $id, afterEventId: $after) { eventId } }';

  it('ignores formatting, key order and a resume point used only as afterEventId', () => {
    const key = operationKey(args(STATUS, { id: 's1' }));
    expect(operationKey(args(`subscription S($id: ID!, $after: ID) {\n  turnStatusChanged(sessionId: $id, afterEventId: $after) {\n    eventId\n  }\n}`, { id: 's1' }))).toBe(key);
    expect(operationKey(args(STATUS, { id: 's1', after: '17' }))).toBe(key);
    expect(operationKey(args(STATUS, { after: null, id: 's1' }))).toBe(key);
  });

  it('tells apart other sessions, selections and operation names', () => {
    const key = operationKey(args(STATUS, { id: 's1' }));
    expect(operationKey(args(STATUS, { id: 's2' }))).not.toBe(key);
    expect(operationKey(args(STATUS.replace('{ eventId }', '{ eventId status }'), { id: 's1' }))).not.toBe(key);
    expect(operationKey(args(`${STATUS} subscription T { sessionActivity { eventId } }`, { id: 's1' }, 'S'))).not.toBe(key);
  });

  it('keys a variable that is also used outside afterEventId', () => {
    const twice = 'subscription S($id: ID!) { turnStatusChanged(sessionId: $id, afterEventId: $id) { eventId } }';
    expect(operationKey(args(twice, { id: '1' }))).not.toBe(operationKey(args(twice, { id: '2' })));
  });

  it('lets admins of one org share, and everyone else only with themselves', () => {
    expect(visibilityOf(admin('a'))).toBe(visibilityOf(admin('b')));
    expect(visibilityOf(admin('a'))).not.toBe(visibilityOf(admin('a', 'globex')));
    expect(visibilityOf(user('alice'))).toBe(visibilityOf(user('alice')));
    expect(visibilityOf(user('alice'))).not.toBe(visibilityOf(user('bob')));
    expect(visibilityOf(user('alice'))).not.toBe(visibilityOf(user('alice', 'globex')));
    expect(visibilityOf(user('alice'))).not.toBe(visibilityOf(admin('alice')));
  });
});

describe('live configuration', () => {
  it('defaults to the in-process bus, 72 h of history and graphql-ws timings', () => {
    expect(loadConfig({}).live).toEqual({
      redisUrl: null,
      redisKeyPrefix: 'asg:',
      eventRetentionHours: 72,
      wsConnectionInitTimeoutMs: 5_000,
      wsKeepAliveMs: 12_000,
      wsMaxSubscriptionsPerConnection: 100,
      wsMaxConnectionsPerUser: 20,
      wsMaxPayloadBytes: 65_536,
      wsMaxBufferedBytes: 1_048_576,
      wsSharedExecution: true,
      sseMaxStreamsPerUser: 100,
      maxOperationsPerUser: 200,
      redisTimeoutMs: 2_000,
    });
  });

  it('reads every variable', () => {
    expect(
      loadConfig({
        REDIS_URL: 'rediss://cache:6380/2',
        REDIS_KEY_PREFIX: 'prod-eu:',
        EVENT_RETENTION_HOURS: '24',
        WS_CONNECTION_INIT_TIMEOUT_MS: '1000',
        WS_KEEPALIVE_MS: '0',
        WS_MAX_SUBSCRIPTIONS_PER_CONNECTION: '10',
        WS_MAX_CONNECTIONS_PER_USER: '3',
        WS_MAX_PAYLOAD_BYTES: '4096',
        WS_MAX_BUFFERED_BYTES: '65536',
        WS_SHARED_EXECUTION: 'false',
        SSE_MAX_STREAMS_PER_USER: '7',
        LIVE_MAX_OPERATIONS_PER_USER: '40',
        REDIS_TIMEOUT_MS: '500',
      }).live,
    ).toEqual({
      redisUrl: 'rediss://cache:6380/2',
      redisKeyPrefix: 'prod-eu:',
      eventRetentionHours: 24,
      wsConnectionInitTimeoutMs: 1000,
      wsKeepAliveMs: 0,
      wsMaxSubscriptionsPerConnection: 10,
      wsMaxConnectionsPerUser: 3,
      wsMaxPayloadBytes: 4096,
      wsMaxBufferedBytes: 65_536,
      wsSharedExecution: false,
      sseMaxStreamsPerUser: 7,
      maxOperationsPerUser: 40,
      redisTimeoutMs: 500,
    });
  });

  it.each([
    ['REDIS_URL', 'http://cache:6379'],
    ['REDIS_KEY_PREFIX', 'has spaces'],
    ['EVENT_RETENTION_HOURS', '0'],
    ['WS_CONNECTION_INIT_TIMEOUT_MS', 'soon'],
    ['WS_KEEPALIVE_MS', '-1'],
    ['WS_SHARED_EXECUTION', 'maybe'],
    ['WS_MAX_SUBSCRIPTIONS_PER_CONNECTION', '0'],
    ['WS_MAX_CONNECTIONS_PER_USER', 'many'],
    ['WS_MAX_PAYLOAD_BYTES', '100'],
    ['REDIS_TIMEOUT_MS', '10'],
    ['WS_MAX_BUFFERED_BYTES', '1024'],
  ])('names %s when its value %p does not parse', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
  });
});
