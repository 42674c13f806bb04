import { idProblem, isId, MAX_ID_LENGTH, optionalId, requireId } from '../../src/domain/ids';
import { requireText, requireWellFormed } from '../../src/domain/validation';
import { parseRetrievalPathPrefixes } from '../../src/domain/retrieval-scope';

describe('the id rule (issue 36)', () => {
  it.each([
    ['acme'],
    ['acme '],
    ['corp\uFFFD'],
    ['usér-😀'],
    ['x'.repeat(MAX_ID_LENGTH)],
    ['9f0c1f2e-6c2b-4f5e-9a51-3f1d2b7c8e90'],
  ])('accepts %p', (id) => {
    expect(idProblem(id)).toBeNull();
    expect(isId(id)).toBe(true);
    expect(requireId('sessionId', id)).toBe(id);
  });

  it.each([
    ['an empty string', '', 'must not be empty'],
    ['65 characters', 'x'.repeat(MAX_ID_LENGTH + 1), 'at most 64'],
    ['a lone high surrogate', 'corp\ud800', 'unpaired surrogate'],
    ['a lone low surrogate', 'corp\udc00', 'unpaired surrogate'],
    ['the last low surrogate', 'corp\udfff', 'unpaired surrogate'],
    ['a reversed pair', 'corp\ude00\ud83d', 'unpaired surrogate'],
    ['a high surrogate at the start', '\udbffcorp', 'unpaired surrogate'],
    ['NUL', 'corp\u0000', 'control characters'],
    ['a newline', 'corp\n', 'control characters'],
    ['DEL', 'corp\u007f', 'control characters'],
    ['a C1 control', 'corp\u0085', 'control characters'],
  ])('refuses %s', (_what, id, problem) => {
    expect(idProblem(id)).toContain(problem);
    expect(isId(id)).toBe(false);
    expect(() => requireId('sessionId', id)).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT', details: { field: 'sessionId' } }));
  });

  it('counts UTF-16 code units: 32 emoji fill an id', () => {
    expect(isId('😀'.repeat(32))).toBe(true);
    expect(isId(`${'😀'.repeat(32)}x`)).toBe(false);
  });

  it('lets an optional id be absent', () => {
    expect(optionalId('turnId', null)).toBeNull();
    expect(optionalId('turnId', undefined)).toBeNull();
    expect(() => optionalId('turnId', '')).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' }));
    expect(isId(42)).toBe(false);
  });
});

describe('stored text is well-formed', () => {
  it('refuses an unpaired surrogate in names, instructions and paths, and keeps pairs', () => {
    expect(() => requireText('name', 'Report \ud800', 200)).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT', details: { field: 'name' } }));
    expect(() => requireWellFormed('activeFiles.content', 'a\udfffb')).toThrow(/well-formed/);
    expect(() => parseRetrievalPathPrefixes(['src/\ud800'])).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' }));
    expect(requireText('name', ' Report 😀 ', 200)).toBe('Report 😀');
    expect(requireWellFormed('instruction', 'keep \uFFFD as it is')).toBe('keep \uFFFD as it is');
  });
});
