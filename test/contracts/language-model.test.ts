import { OfflineLanguageModel } from '../../src/llm/offline.adapter';
import { OpenAIResponsesAdapter } from '../../src/llm/openai-responses.adapter';
import { startFakeOpenAI } from '../support/fake-openai';
import { ScriptedModel } from '../support/in-memory-ports';
import { languageModelContract } from './language-model.contract';

describe('language model: OpenAI Responses adapter against the Responses API stand-in', () =>
  languageModelContract(async () => {
    const provider = await startFakeOpenAI();
    const model = new OpenAIResponsesAdapter({ apiKey: 'sk-test', baseURL: provider.url, timeoutMs: 5000, retry: { maxRetries: 0, maxDelayMs: 1000 } });
    return {
      model,
      scriptAnswer: (chunks) => provider.enqueue({ kind: 'text', chunks }),
      scriptStall: () => provider.enqueue({ kind: 'stall', chunks: ['thinking'] }),
      dispose: () => provider.close(),
    };
  }));

describe('language model: offline adapter', () =>
  languageModelContract(async () => ({ model: new OfflineLanguageModel(), scriptAnswer: null, scriptStall: null, dispose: async () => {} })));

describe('language model: the scripted model of the orchestrator tests', () =>
  languageModelContract(async () => {
    const model = new ScriptedModel();
    return {
      model,
      scriptAnswer: (chunks) => model.enqueue({ kind: 'text', chunks }),
      scriptStall: () => model.enqueue({ kind: 'stall', chunks: ['thinking'] }),
      dispose: async () => {},
    };
  }));
