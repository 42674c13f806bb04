import { DEFAULT_MODEL_PRICING, addUsage, parsePricing, priceOf, usageOf } from '../../src/domain/pricing';
import { costOf } from '../../src/domain/usage';

describe('cached input pricing (spec 003, issue 10 item 6)', () => {
  const price = { inputPer1K: 1, cachedInputPer1K: 0.25, outputPer1K: 2 };

  it('prices the cached part of the input at the cached rate and the rest at the input rate', () => {
    expect(costOf(price, 4000, 1000, 2000)).toBe(2 + 0.5 + 2);
    expect(costOf(price, 4000, 1000)).toBe(4 + 2);
    // A model without a cached rate charges cached input as input; more cached than input is capped.
    expect(costOf({ inputPer1K: 1, outputPer1K: 2 }, 4000, 0, 2000)).toBe(4);
    expect(costOf(price, 1000, 0, 5000)).toBe(0.25);
  });

  it('keeps the cached tokens a provider reported, inside the input tokens, and sums them over rounds', () => {
    const first = usageOf({ inputTokens: 1000, outputTokens: 10, cachedInputTokens: 800 }, { inputText: '', outputText: '' }, price);
    expect(first).toMatchObject({ inputTokens: 1000, cachedInputTokens: 800, estimatedCostUsd: 0.42, isEstimated: false });
    const estimated = usageOf(null, { inputText: 'x'.repeat(40), outputText: 'y'.repeat(8) }, price);
    expect(estimated).toMatchObject({ inputTokens: 10, outputTokens: 2, cachedInputTokens: 0, isEstimated: true });
    expect(addUsage(first, estimated)).toMatchObject({ inputTokens: 1010, cachedInputTokens: 800, isEstimated: true });
  });

  it('reads cachedInputPer1K from MODEL_PRICING next to inputPer1K, optional, and refuses a bad one', () => {
    const table = parsePricing('{"m": {"inputPer1K": 1, "outputPer1K": 2, "cachedInputPer1K": 0.5}, "n": {"inputPer1K": 1, "outputPer1K": 2}}');
    expect(table.m).toEqual({ inputPer1K: 1, outputPer1K: 2, cachedInputPer1K: 0.5 });
    expect(table.n).toEqual({ inputPer1K: 1, outputPer1K: 2 });
    expect(() => parsePricing('{"m": {"inputPer1K": 1, "outputPer1K": 2, "cachedInputPer1K": -1}}')).toThrow('MODEL_PRICING.m.cachedInputPer1K must be a non-negative number');
    expect(() => parsePricing('{"m": {"inputPer1K": 1, "outputPer1K": 2, "cachedInputPer1K": "cheap"}}')).toThrow('cachedInputPer1K');
  });

  it('ships cached rates for the built-in models and prices dated snapshots by prefix', () => {
    expect(priceOf(DEFAULT_MODEL_PRICING, 'gpt-4.1-mini-2025-04-14')).toEqual({ inputPer1K: 0.0004, cachedInputPer1K: 0.0001, outputPer1K: 0.0016 });
    for (const [model, p] of Object.entries(DEFAULT_MODEL_PRICING)) {
      if (model !== 'offline') expect(p.cachedInputPer1K).toBeLessThan(p.inputPer1K);
    }
  });
});
