import { fileHistoryOf, MAX_SENDABLE_FILE_BYTES, normalisePath, planActiveFiles, sha256Hex } from '../../src/domain/active-files';
import { chainExpiryOf, decideChain, type ChainTurn } from '../../src/domain/chain';
import { chunksOfChain, newSnippets } from '../../src/domain/chunk-delta';
import { finalResponse, modeDisplayName, toolContinuation } from '../../src/domain/execute-response';
import { canonicalJson, inputFingerprint, parseIdempotencyKey } from '../../src/domain/idempotency';
import { addUsage, DEFAULT_MODEL_PRICING, parsePricing, priceOf, usageOf } from '../../src/domain/pricing';
import { matchToolResults, toolOutputText } from '../../src/domain/tool-results';
import type { ChunkRef } from '../../src/domain/turn';
import { askedRetryDelayMs } from '../../src/llm/retry-bounds';

const noHistory = { sentInChain: new Map<string, string>(), knownSizes: new Map<string, number>() };
const file = (path: string, content: string | null, extra: { contentHash?: string; isTouched?: boolean } = {}) => ({
  path,
  content,
  contentHash: extra.contentHash ?? null,
  isTouched: extra.isTouched ?? true,
});

describe('active files (spec 001 sections 5-6)', () => {
  it('hashes every file with SHA-256 and records size, touched flag and what was sent', () => {
    const plan = planActiveFiles([file('src/a.ts', 'export const a = 1;\n', { isTouched: false })], noHistory);
    expect(plan.files[0]?.ref).toEqual({
      path: 'src/a.ts',
      contentHash: sha256Hex('export const a = 1;\n'),
      sizeBytes: 20,
      isTouched: false,
      wasSentToLLM: true,
      wasTooLargeToSend: false,
    });
    expect(plan.files[0]?.delivery).toBe('inline');
    expect(plan.warnings).toEqual([]);
  });

  it('does not send a file over 100 KB, records it, and warns', () => {
    const big = 'é'.repeat(MAX_SENDABLE_FILE_BYTES / 2 + 1); // 2 bytes per character in UTF-8
    const plan = planActiveFiles([file('big.json', big), file('exactly.txt', 'x'.repeat(MAX_SENDABLE_FILE_BYTES))], noHistory);
    expect(plan.files[0]?.ref).toMatchObject({ wasTooLargeToSend: true, wasSentToLLM: false, sizeBytes: MAX_SENDABLE_FILE_BYTES + 2 });
    expect(plan.files[0]?.delivery).toBe('none');
    expect(plan.files[1]?.ref).toMatchObject({ wasTooLargeToSend: false, wasSentToLLM: true });
    expect(plan.warnings).toEqual([`big.json (${MAX_SENDABLE_FILE_BYTES + 2} bytes) is larger than 100 KB and was not sent to the model.`]);
  });

  it('inside a live chain sends a changed file again but not an unchanged one', () => {
    const history = { sentInChain: new Map([['a.ts', sha256Hex('v1')], ['b.ts', sha256Hex('b')]]), knownSizes: new Map() };
    const plan = planActiveFiles([file('a.ts', 'v2'), file('b.ts', 'b')], history);
    expect(plan.files.map((f) => [f.ref.path, f.ref.wasSentToLLM, f.delivery])).toEqual([
      ['a.ts', true, 'inline'],
      ['b.ts', false, 'none'],
    ]);
  });

  it('accepts path + contentHash for a version the session knows: not re-sent in a live chain, re-sent from storage on a new one', () => {
    const hash = sha256Hex('known');
    const live = planActiveFiles([file('k.ts', null, { contentHash: hash.toUpperCase() })], {
      sentInChain: new Map([['k.ts', hash]]),
      knownSizes: new Map([[hash, 5]]),
    });
    expect(live.files[0]).toMatchObject({ delivery: 'none', ref: { contentHash: hash, sizeBytes: 5, wasSentToLLM: false } });
    const fresh = planActiveFiles([file('k.ts', null, { contentHash: hash })], { sentInChain: new Map(), knownSizes: new Map([[hash, 5]]) });
    expect(fresh.files[0]).toMatchObject({ delivery: 'stored', ref: { wasSentToLLM: true } });
  });

  it.each([
    ['no content and no hash', [file('a', null)], 'needs its content'],
    ['a hash the session never saw', [file('a', null, { contentHash: sha256Hex('?') })], 'has no earlier version'],
    ['a hash that does not match the content', [file('a', 'abc', { contentHash: sha256Hex('abd') })], 'does not match'],
    ['a malformed hash', [file('a', null, { contentHash: 'md5:123' })], 'hex SHA-256'],
    ['the same path twice', [file('a', 'x'), file('a', 'y')], 'listed twice'],
  ])('refuses %s', (_what, files, message) => {
    expect(() => planActiveFiles(files, noHistory)).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT', message: expect.stringContaining(message) }));
  });

  it('normalises paths so every client spells a file the same way', () => {
    expect(normalisePath('.\\src\\\\a.ts')).toBe('src/a.ts');
    expect(normalisePath('./lib//b.ts ')).toBe('lib/b.ts');
    expect(() => normalisePath('  ')).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' }));
  });

  it('derives what the live chain already carried, the latest version per path winning', () => {
    const ref = (path: string, content: string, sent: boolean) => ({
      path,
      contentHash: sha256Hex(content),
      sizeBytes: content.length,
      isTouched: true,
      wasSentToLLM: sent,
      wasTooLargeToSend: false,
    });
    const turns = [{ activeFileRefs: [ref('a', 'v1', true)] }, { activeFileRefs: [ref('a', 'v2', true), ref('b', 'b', false)] }];
    const history = fileHistoryOf(turns, turns);
    expect(history.sentInChain.get('a')).toBe(sha256Hex('v2'));
    expect(history.sentInChain.has('b')).toBe(false);
    expect(history.knownSizes.get(sha256Hex('b'))).toBe(1);
    expect(history.knownSizes.get(sha256Hex('v1'))).toBe(2);
    expect(history.knownSizes.has(sha256Hex('never'))).toBe(false);
  });
});

describe('provider chain (spec 001 sections 8, 9, 11)', () => {
  const now = new Date('2026-03-01T00:00:00Z');
  const turn = (n: number, extra: Partial<ChainTurn>): ChainTurn => ({
    id: `t${n}`,
    sequenceNumber: n,
    status: 'COMPLETED',
    conversationId: 'conv',
    openAIResponseId: `resp_${n}`,
    previousOpenAIResponseId: n > 1 ? `resp_${n - 1}` : null,
    openAIChainExpiresDate: new Date('2026-03-20T00:00:00Z'),
    activeFileRefs: [],
    chunkRefs: [],
    ...extra,
  });

  it('starts the first turn on a new chain without a warning', () => {
    expect(decideChain([], now)).toEqual({ kind: 'new', reason: 'FIRST_TURN', warning: null });
  });

  it('continues the last completed response while the chain lives, and knows its links', () => {
    const history = [turn(1, { previousOpenAIResponseId: null }), turn(2, {}), turn(3, { previousOpenAIResponseId: null, openAIResponseId: 'resp_x' })];
    const decision = decideChain(history.slice(0, 2), now);
    expect(decision).toMatchObject({ kind: 'continue', previousResponseId: 'resp_2', conversationId: 'conv' });
    expect(decision.kind === 'continue' && decision.links.map((l) => l.id)).toEqual(['t1', 't2']);
    const restarted = decideChain(history, now);
    expect(restarted.kind === 'continue' && restarted.links.map((l) => l.id)).toEqual(['t3']);
  });

  it.each([
    ['failed', { status: 'FAILED' as const, openAIResponseId: null }],
    ['cancelled', { status: 'CANCELLED' as const, openAIResponseId: 'resp_partial' }],
    ['failed while waiting for tools', { status: 'FAILED' as const, openAIResponseId: 'resp_tools' }],
  ])('continues from the last completed response after a %s turn', (_what, last) => {
    const decision = decideChain([turn(1, {}), turn(2, { ...last, previousOpenAIResponseId: 'resp_1' })], now);
    expect(decision).toMatchObject({ kind: 'continue', previousResponseId: 'resp_1' });
    expect(decision.kind === 'continue' && decision.links.map((l) => l.id)).toEqual(['t1']);
  });

  it('starts a new chain when the last completed response expired, or no turn ever completed, and says why', () => {
    const expired = decideChain([turn(1, { openAIChainExpiresDate: new Date('2026-02-28T00:00:00Z') }), turn(2, { status: 'FAILED', openAIResponseId: null })], now);
    expect(expired).toMatchObject({ kind: 'new', reason: 'EXPIRED' });
    expect(expired.kind === 'new' && expired.warning).toContain('expired on 2026-02-28T00:00:00.000Z');
    const none = decideChain([turn(1, { status: 'FAILED', openAIResponseId: null }), turn(2, { status: 'CANCELLED', openAIResponseId: null })], now);
    expect(none).toMatchObject({ kind: 'new', reason: 'NO_USABLE_PREVIOUS_RESPONSE' });
    expect(none.kind === 'new' && none.warning).toContain('No earlier turn has a model response to continue');
  });

  it('keeps a continued chain at its first link’s expiry; a new chain lives TTL from its response', () => {
    const received = new Date('2026-03-01T00:00:05Z');
    const continued = decideChain([turn(1, {})], now);
    expect(chainExpiryOf(continued, received, 60)).toEqual(new Date('2026-03-20T00:00:00Z'));
    expect(chainExpiryOf({ kind: 'new', reason: 'FIRST_TURN', warning: null }, received, 60)).toEqual(new Date('2026-03-01T00:01:05Z'));
  });
});

describe('snippet delta (spec 001 section 7)', () => {
  const chunk = (id: string, hash = `h-${id}`): { ref: ChunkRef; text: string } => ({
    ref: { chunkId: id, path: `${id}.ts`, startLine: 1, endLine: 9, contentHash: hash, score: 0.5 },
    text: id,
  });
  it('sends only snippets the chain has not carried (a changed chunk counts as new), each once', () => {
    const sent = chunksOfChain([{ chunkRefs: [chunk('a').ref, chunk('b').ref] }]);
    const fresh = newSnippets([chunk('a'), chunk('b', 'changed'), chunk('c'), chunk('c')], sent);
    expect(fresh.map((c) => `${c.ref.chunkId}:${c.ref.contentHash}`)).toEqual(['b:changed', 'c:h-c']);
  });
});

describe('tool results (AGN-033 3.3, 5.2)', () => {
  const pending = [
    { toolCallId: 'call_1', name: 'read_file', argumentsJson: '{}' },
    { toolCallId: 'call_2', name: 'run_tests', argumentsJson: '{}' },
  ];
  const result = (id: string, outcome: { resultJson?: string | null; errorMessage?: string | null } = { resultJson: '{"ok":1}' }) => ({
    toolCallId: id,
    executionMs: 12,
    resultJson: outcome.resultJson ?? null,
    errorMessage: outcome.errorMessage ?? null,
  });

  it('accepts results that answer the calls exactly, tool failures included', () => {
    const matched = matchToolResults(pending, [result('call_1'), result('call_2', { errorMessage: 'tests failed' })]);
    expect(matched.map(toolOutputText)).toEqual(['{"ok":1}', '{"error":"tests failed"}']);
  });

  it.each([
    ['too few results', [result('call_1')], 'expected 2 tool result(s), got 1'],
    ['too many results', [result('call_1'), result('call_2'), result('call_3')], 'expected 2 tool result(s), got 3'],
    ['the wrong order', [result('call_2'), result('call_1')], 'tool result 1 answers call_2, expected call_1'],
    ['an unknown id', [result('call_1'), result('call_9')], 'tool result 2 answers call_9, expected call_2'],
    ['both result and error', [result('call_1', { resultJson: '1', errorMessage: 'x' }), result('call_2')], 'exactly one of'],
    ['neither result nor error', [result('call_1', { resultJson: null }), result('call_2')], 'exactly one of'],
    ['a result that is not JSON', [result('call_1', { resultJson: '{oops' }), result('call_2')], 'not valid JSON'],
  ])('refuses %s as TOOL_RESULTS_MISMATCH', (_what, submitted, message) => {
    expect(() => matchToolResults(pending, submitted)).toThrow(expect.objectContaining({ code: 'TOOL_RESULTS_MISMATCH', message: expect.stringContaining(message) }));
  });
});

describe('AGN-033 response buckets', () => {
  const meta = { sessionId: 's', turnId: 't', mode: 'code_review' };
  it('a final response has the full text and leaves absent buckets out entirely', () => {
    const long = 'y'.repeat(5000);
    const bare = finalResponse(meta, { text: long, warnings: [], usage: null });
    expect(Object.keys(bare).sort()).toEqual(['kind', 'modeDisplayName', 'primaryOutputText', 'sessionId', 'turnId']);
    expect(bare.primaryOutputText).toHaveLength(5000);
    expect(bare.modeDisplayName).toBe('Code review');
    const full = finalResponse(meta, { text: 'x', warnings: ['w'], usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2, estimatedCostUsd: null, isEstimated: true } });
    expect(Object.keys(full)).toEqual(expect.arrayContaining(['userWarnings', 'usage']));
    expect(full).not.toHaveProperty('toolCalls');
    expect(full).not.toHaveProperty('toolContinuationMessage');
  });

  it('a continuation carries only the calls and, when there is one, a message', () => {
    const calls = [{ toolCallId: 'c', name: 'n', argumentsJson: '{}' }];
    const plain = toolContinuation(meta, calls, '  ');
    expect(Object.keys(plain).sort()).toEqual(['kind', 'modeDisplayName', 'sessionId', 'toolCalls', 'turnId']);
    expect(toolContinuation(meta, calls, 'Checking…').toolContinuationMessage).toBe('Checking…');
    expect(modeDisplayName('ask')).toBe('Ask');
  });
});

describe('usage and cost (spec 003)', () => {
  it('uses provider counts when given and prices them per 1K tokens', () => {
    const usage = usageOf({ inputTokens: 2000, outputTokens: 500 }, { inputText: '', outputText: '' }, { inputPer1K: 0.5, outputPer1K: 2 });
    expect(usage).toEqual({ inputTokens: 2000, outputTokens: 500, totalTokens: 2500, cachedInputTokens: 0, estimatedCostUsd: 2, isEstimated: false });
  });

  it('estimates ceil(chars/4) when the provider reports nothing, and flags it', () => {
    const usage = usageOf(null, { inputText: 'x'.repeat(9), outputText: 'y'.repeat(4) }, undefined);
    expect(usage).toEqual({ inputTokens: 3, outputTokens: 1, totalTokens: 4, cachedInputTokens: 0, estimatedCostUsd: null, isEstimated: true });
  });

  it('reads MODEL_PRICING over the defaults and prices dated snapshots by prefix', () => {
    const table = parsePricing('{"my-model": {"inputPer1K": 1, "outputPer1K": 3}, "gpt-4.1": {"inputPer1K": 9, "outputPer1K": 9}}');
    expect(priceOf(table, 'my-model')).toEqual({ inputPer1K: 1, outputPer1K: 3 });
    expect(priceOf(table, 'gpt-4.1-2025-04-14')).toEqual({ inputPer1K: 9, outputPer1K: 9 });
    expect(priceOf(table, 'gpt-4.1-mini-2025-04-14')).toEqual(DEFAULT_MODEL_PRICING['gpt-4.1-mini']);
    expect(priceOf(table, 'unknown')).toBeUndefined();
    expect(() => parsePricing('{"m": {"inputPer1K": -1, "outputPer1K": 1}}')).toThrow('MODEL_PRICING.m');
    expect(() => parsePricing('not json')).toThrow('MODEL_PRICING must be JSON');
  });

  it('sums the provider calls of one turn', () => {
    const a = usageOf({ inputTokens: 10, outputTokens: 2 }, { inputText: '', outputText: '' }, { inputPer1K: 1, outputPer1K: 1 });
    const b = usageOf(null, { inputText: 'abcd', outputText: 'abcd' }, { inputPer1K: 1, outputPer1K: 1 });
    expect(addUsage(a, b)).toEqual({ inputTokens: 11, outputTokens: 3, totalTokens: 14, cachedInputTokens: 0, estimatedCostUsd: 0.014, isEstimated: true });
  });
});

describe('idempotency fingerprints', () => {
  it('ignores key order but not values', () => {
    expect(canonicalJson({ b: 1, a: [{ y: 2, x: null }] })).toBe('{"a":[{"x":null,"y":2}],"b":1}');
    expect(inputFingerprint('execute', { a: 1, b: 2 })).toBe(inputFingerprint('execute', { b: 2, a: 1 }));
    expect(inputFingerprint('execute', { a: 1 })).not.toBe(inputFingerprint('executeAsync', { a: 1 }));
  });

  it('accepts printable keys only', () => {
    expect(parseIdempotencyKey('retry-123')).toBe('retry-123');
    expect(() => parseIdempotencyKey('has space')).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' }));
    expect(() => parseIdempotencyKey('k'.repeat(201))).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' }));
  });
});

describe('provider retry policy', () => {
  const headers = (h: Record<string, string>) => new Headers(h);
  it('reads the wait a provider asks for in seconds, milliseconds or as a date, as the SDK does', () => {
    expect(askedRetryDelayMs(headers({ 'retry-after': '3' }))).toBe(3000);
    expect(askedRetryDelayMs(headers({ 'retry-after': '0.5' }))).toBe(500);
    expect(askedRetryDelayMs(headers({ 'retry-after-ms': '250', 'retry-after': '9' }))).toBe(250);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(askedRetryDelayMs(headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:04 GMT' }), now)).toBe(4000);
    expect(askedRetryDelayMs(headers({ 'retry-after': 'Wed, 31 Dec 2025 23:59:00 GMT' }), now)).toBe(0);
  });

  it('finds no ask when the provider makes none it can read', () => {
    expect(askedRetryDelayMs(headers({}))).toBeNull();
    expect(askedRetryDelayMs(headers({ 'retry-after': 'soon' }))).toBeNull();
  });
});
