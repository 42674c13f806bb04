import { parseConversationContext, parseAgentContext } from '../../src/domain/contexts';
import { assertPageSize, decodeCursor, encodeCursor } from '../../src/domain/pagination';
import { summarize, SUMMARY_LENGTH } from '../../src/domain/text';
import { assertTransition, isTerminal, TURN_STATUSES } from '../../src/domain/turn-status';
import { costOf, estimateTokens } from '../../src/domain/usage';
import { optionalText, requireText } from '../../src/domain/validation';
import { canManage, canRead } from '../../src/domain/visibility';
import { admin, user } from '../support/testkit/users';

describe('turn status transitions (DD-002B/C)', () => {
  it('lets a turn leave PENDING for every terminal status', () => {
    for (const to of ['COMPLETED', 'FAILED', 'CANCELLED'] as const) expect(() => assertTransition('PENDING', to)).not.toThrow();
  });

  it('never mutates a terminal turn', () => {
    for (const from of TURN_STATUSES.filter(isTerminal)) {
      for (const to of ['COMPLETED', 'FAILED', 'CANCELLED'] as const) {
        expect(() => assertTransition(from, to)).toThrow(expect.objectContaining({ code: 'CONFLICT' }));
      }
    }
  });
});

describe('summaries (DD-005)', () => {
  it('keeps short text whole and cuts long text at 1024 characters', () => {
    expect(summarize('short')).toBe('short');
    expect(summarize('x'.repeat(5000))).toHaveLength(SUMMARY_LENGTH);
  });

  it('never splits a surrogate pair', () => {
    const text = `${'a'.repeat(SUMMARY_LENGTH - 1)}😀tail`;
    const s = summarize(text);
    expect(s).toBe('a'.repeat(SUMMARY_LENGTH - 1));
    expect(() => encodeURIComponent(s)).not.toThrow();
  });
});

describe('cursors and page sizes', () => {
  it('round-trips a position for its own ordering only', () => {
    const c = encodeCursor('NAME_ASC', { key: 'alpha', id: 'id-1' });
    expect(decodeCursor('NAME_ASC', c)).toEqual({ key: 'alpha', id: 'id-1' });
    expect(() => decodeCursor('CREATED_DESC', c)).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' }));
  });

  it.each(['', 'not base64!', Buffer.from('{"a":1}').toString('base64url'), Buffer.from('["NAME_ASC",{},"x"]').toString('base64url'), 'A'.repeat(600)])(
    'refuses the malformed cursor %p',
    (cursor) => expect(() => decodeCursor('NAME_ASC', cursor)).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' })),
  );

  it('accepts 1..100 items per page and nothing else', () => {
    expect(assertPageSize(1)).toBe(1);
    expect(assertPageSize(100)).toBe(100);
    for (const bad of [0, 101, -1, 2.5, Number.NaN]) expect(() => assertPageSize(bad)).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' }));
  });
});

describe('visibility', () => {
  const session = { orgId: 'acme', ownerUserId: 'alice', isPublic: false, isDeleted: false };

  it('lets owners, participants and admins read a private session; nobody of another org', () => {
    expect(canRead(user('alice'), session, false)).toBe(true);
    expect(canRead(user('bob'), session, false)).toBe(false);
    expect(canRead(user('bob'), session, true)).toBe(true);
    expect(canRead(admin(), session, false)).toBe(true);
    expect(canRead(admin('root', 'globex'), session, true)).toBe(false);
    expect(canRead(user('alice', 'globex'), session, true)).toBe(false);
  });

  it('shows public sessions to the org, deleted ones only to admins', () => {
    expect(canRead(user('bob'), { ...session, isPublic: true }, false)).toBe(true);
    expect(canRead(user('alice'), { ...session, isDeleted: true }, false)).toBe(false);
    expect(canRead(admin(), { ...session, isDeleted: true }, false)).toBe(true);
  });

  it('lets only owners and admins manage a session', () => {
    expect(canManage(user('alice'), session)).toBe(true);
    expect(canManage(user('bob'), { ...session, isPublic: true })).toBe(false);
    expect(canManage(admin(), session)).toBe(true);
    expect(canManage(admin('root', 'globex'), session)).toBe(false);
  });
});

describe('text fields', () => {
  it('trims required text and refuses empty or over-long values', () => {
    expect(requireText('name', '  x  ', 10)).toBe('x');
    expect(() => requireText('name', '   ', 10)).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' }));
    expect(() => requireText('name', 'x'.repeat(11), 10)).toThrow(/at most 10/);
    expect(optionalText('d', null, 5)).toBeNull();
    expect(() => optionalText('d', '123456', 5)).toThrow(expect.objectContaining({ details: { field: 'd' } }));
  });
});

describe('context validation', () => {
  it('accepts a valid agent context and refuses odd collection names', () => {
    expect(parseAgentContext({ name: 'A', vectorCollection: 'backend.v2', defaultModel: 'm' })).toMatchObject({ vectorCollection: 'backend.v2' });
    expect(() => parseAgentContext({ name: 'A', vectorCollection: '../etc', defaultModel: 'm' })).toThrow(/vectorCollection/);
    expect(parseAgentContext({ name: 'A', vectorCollection: 'eu_docs', defaultModel: 'm' })).toMatchObject({ vectorCollection: 'eu_docs' });
    // "__" separates the org in org-scoped collection names.
    expect(() => parseAgentContext({ name: 'A', vectorCollection: 'eu__docs', defaultModel: 'm' })).toThrow(
      expect.objectContaining({ code: 'BAD_USER_INPUT', message: expect.stringMatching(/must not contain "__"/) }),
    );
  });

  it('normalises tool schemas and refuses invalid ones', () => {
    const ok = parseConversationContext({ name: 'c', systemPrompt: 'p', tools: [{ name: 'read_file', parametersJson: ' { "type" : "object" } ' }] });
    expect(ok.tools).toEqual([{ name: 'read_file', description: null, parametersJson: '{"type":"object"}' }]);
    expect(() => parseConversationContext({ name: 'c', systemPrompt: 'p', tools: [{ name: 'x', parametersJson: '"str"' }] })).toThrow(/JSON Schema object/);
    expect(() => parseConversationContext({ name: 'c', systemPrompt: 'p', temperature: -0.1 })).toThrow(/temperature/);
  });
});

describe('usage (spec 003)', () => {
  it('estimates about four characters per token, rounding up', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abcd')).toBe(1);
    expect(estimateTokens('abcde')).toBe(2);
  });

  it('prices input and output per 1K tokens, or not at all without a price', () => {
    expect(costOf({ inputPer1K: 0.15, outputPer1K: 0.6 }, 2000, 500)).toBeCloseTo(0.6, 10);
    expect(costOf(undefined, 2000, 500)).toBeNull();
  });
});
