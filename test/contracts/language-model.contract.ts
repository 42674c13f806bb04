import { LlmError, type LanguageModel, type LlmRequest, type LlmResponse } from '../../src/llm/llm.port';

export interface LanguageModelSubject {
  readonly model: LanguageModel;
  /** Makes the next call stream these pieces; null for an adapter that writes its own answer (offline). */
  readonly scriptAnswer: ((chunks: readonly string[]) => void) | null;
  /** Makes the next call stream a little, then wait until it is aborted; null when every answer streams in several pieces anyway. */
  readonly scriptStall: (() => void) | null;
  dispose(): Promise<void>;
}

const request: LlmRequest = {
  model: 'gpt-4.1-mini',
  instructions: 'You are careful.',
  temperature: 0.2,
  previousResponseId: null,
  input: [{ type: 'message', role: 'user', text: `Explain the retry policy.${' Please.'.repeat(40)}` }],
  tools: [],
};

/** What the orchestrator needs of every language model (llm.port.ts), whichever provider answers. */
export function languageModelContract(open: () => Promise<LanguageModelSubject>): void {
  let subject: LanguageModelSubject;
  beforeAll(async () => {
    subject = await open();
  });
  afterAll(() => subject.dispose());

  const respond = (signal = new AbortController().signal, onDelta: (d: string) => void = () => {}) => {
    const deltas: string[] = [];
    const result: Promise<LlmResponse> = subject.model.respond(request, {
      signal,
      onTextDelta: (d) => {
        deltas.push(d);
        onDelta(d);
      },
    });
    return { deltas, result };
  };

  it('streams the answer in pieces that add up to the whole answer, under a response id and the recorded model name', async () => {
    subject.scriptAnswer?.(['Retries ', 'honour ', 'retry-after.']);
    const { deltas, result } = respond();
    const response = await result;
    if (subject.scriptAnswer) expect(deltas).toEqual(['Retries ', 'honour ', 'retry-after.']);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(response.text);
    expect(response.responseId).toMatch(/\S/);
    expect(response.model).toBe(subject.model.modelFor(request.model));
    expect(response.toolCalls).toEqual([]);
    expect(response.raw).toBeDefined();
  });

  it('stops with an aborted LlmError when the call is aborted mid-stream', async () => {
    subject.scriptStall?.();
    const abort = new AbortController();
    const { result } = respond(abort.signal, () => abort.abort());
    const failure = await result.then(
      () => null,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(LlmError);
    expect(failure).toMatchObject({ kind: 'aborted' });
  });

  it('describes the request it sends as a JSON payload carrying the instruction', () => {
    const payload = subject.model.payloadOf(request);
    const json = JSON.stringify(payload);
    expect(JSON.parse(json)).toEqual(payload);
    expect(json).toContain('Explain the retry policy.');
  });
}
