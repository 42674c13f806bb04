import { decodeOutputDelta, encodeOutputDelta } from '../../src/events/event-wire';
import { checkRelativePath, parseSearchCodeArgs, parseWriteFileArgs } from '../../src/domain/server-tool-args';
import { answerClientCalls, assertClientToolRounds, clientToolRounds, closeOpenCalls, startedCall, takePendingOutputs, toolCallEvent } from '../../src/domain/tool-calls';

const call = (id: string, name = 'read_file') => ({ toolCallId: id, name, argumentsJson: '{"path":"a.ts"}' });

describe('tool call records (spec 004 section 7)', () => {
  it('records the client result on the call it answers, and leaves the others', () => {
    const records = [startedCall(call('c1'), 'CLIENT'), startedCall(call('c2'), 'CLIENT')];
    const answered = answerClientCalls(records, [{ toolCallId: 'c2', executionMs: 5, outcome: { kind: 'result', resultJson: '{"ok":true}' } }]);
    expect(answered.map((r) => [r.id, r.status, r.resultSummary, r.executionMs])).toEqual([
      ['c1', 'WAITING_FOR_CLIENT', null, null],
      ['c2', 'COMPLETED', '{"ok":true}', 5],
    ]);
  });

  it('hands kept server outputs to the continuation once, in call order, and closes what a finished turn left open', () => {
    const kept = [{ ...startedCall(call('s1', 'write_file'), 'SERVER'), status: 'COMPLETED' as const, pendingOutput: '{"written":"a"}' }, startedCall(call('c1'), 'CLIENT')];
    const taken = takePendingOutputs(kept);
    expect(taken.outputs).toEqual([{ callId: 's1', output: '{"written":"a"}' }]);
    expect(takePendingOutputs(taken.records).outputs).toEqual([]);
    expect(closeOpenCalls(kept).map((r) => [r.status, 'pendingOutput' in r])).toEqual([
      ['COMPLETED', false],
      ['ABANDONED', false],
    ]);
  });

  it('counts client-tool rounds by the round number of their calls (unnumbered ones count as the first)', () => {
    expect(clientToolRounds([])).toBe(0);
    const server = startedCall(call('s1', 'write_file'), 'SERVER', 7);
    expect(server).not.toHaveProperty('clientRound');
    const records = [startedCall(call('c0'), 'CLIENT'), server, startedCall(call('c1'), 'CLIENT', 2), startedCall(call('c2'), 'CLIENT', 2)];
    expect(clientToolRounds(records)).toBe(2);
    expect(clientToolRounds(records.slice(0, 2))).toBe(1);
    expect(() => assertClientToolRounds(records, 2, 'resp_9')).not.toThrow();
    expect(() => assertClientToolRounds([...records, startedCall(call('c3'), 'CLIENT', 3)], 2, 'resp_9')).toThrow(
      expect.objectContaining({ code: 'TOO_MANY_TOOL_ROUNDS', limit: 2, responseId: 'resp_9', details: { limit: 2 } }),
    );
    // The round number is the gateway's own bookkeeping: subscribers see the call as before.
    expect(toolCallEvent(records[2]!)).not.toHaveProperty('clientRound');
  });

  it('carries a tool call item over the Redis wire, and drops a malformed one', () => {
    const item = { orgId: 'acme', sessionId: 's', turnId: 't', index: 3, textDelta: '', toolCall: { ...startedCall(call('c1'), 'CLIENT') } };
    expect(decodeOutputDelta(encodeOutputDelta(item))).toEqual(item);
    const bad = JSON.stringify({ ...item, toolCall: { ...item.toolCall, status: 'EXPLODED' } });
    expect(decodeOutputDelta(bad)).toBeNull();
  });
});

describe('server tool arguments', () => {
  it.each([
    ['docs/plan.md', null],
    ['a', null],
    ['../etc/passwd', 'must not contain "." or ".." segments'],
    ['src/../../x', 'must not contain "." or ".." segments'],
    ['/etc/passwd', 'must be relative to the workspace'],
    ['C:/Windows/x', 'must be relative to the workspace'],
    ['a\\b', 'must not contain control characters or backslashes'],
    ['a\u0000b', 'must not contain control characters or backslashes'],
    ['dir/', 'must name a file, without empty segments'],
    ['', 'must not be empty'],
  ])('checks the path %j', (path, error) => {
    expect(checkRelativePath(path)).toBe(error === null ? null : `path ${error}`);
  });

  it('refuses write_file arguments that are not an object with string path and content, or too large', () => {
    expect(parseWriteFileArgs('[1]')).toEqual({ ok: false, error: 'the arguments must be a JSON object' });
    expect(parseWriteFileArgs('{"path":"a.md","content":3}')).toEqual({ ok: false, error: 'content must be a string' });
    expect(parseWriteFileArgs(JSON.stringify({ path: 'a.md', content: 'é'.repeat(500_001) }))).toMatchObject({ ok: false, error: expect.stringContaining('1000002 bytes') });
    expect(parseWriteFileArgs('{"path":"a.md","content":""}')).toEqual({ ok: true, value: { path: 'a.md', content: '' } });
  });

  it('normalises the search_code path prefix and treats an empty one as none', () => {
    expect(parseSearchCodeArgs('{"query":"x","pathPrefix":"src/ui/"}')).toEqual({ ok: true, value: { query: 'x', pathPrefix: 'src/ui' } });
    expect(parseSearchCodeArgs('{"query":"x","pathPrefix":""}')).toEqual({ ok: true, value: { query: 'x', pathPrefix: null } });
    expect(parseSearchCodeArgs('{"query":"  "}')).toEqual({ ok: false, error: 'query must be a non-empty string' });
    expect(parseSearchCodeArgs('{"query":"x","pathPrefix":"../up"}')).toMatchObject({ ok: false });
  });
});
