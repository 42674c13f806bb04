import { costOf, estimateTokens, type ModelPrice, type TurnUsage } from './usage';

export type PricingTable = Readonly<Record<string, ModelPrice>>;

/**
 * Built-in list prices in USD per 1,000 tokens (OpenAI's published per-million prices / 1000,
 * as of 2025). Deployments override or extend them with MODEL_PRICING; an unknown model gets
 * token counts but no cost. The offline adapter costs nothing.
 */
export const DEFAULT_MODEL_PRICING: PricingTable = {
  'gpt-5': { inputPer1K: 0.00125, cachedInputPer1K: 0.000125, outputPer1K: 0.01 },
  'gpt-5-mini': { inputPer1K: 0.00025, cachedInputPer1K: 0.000025, outputPer1K: 0.002 },
  'gpt-5-nano': { inputPer1K: 0.00005, cachedInputPer1K: 0.000005, outputPer1K: 0.0004 },
  'gpt-4.1': { inputPer1K: 0.002, cachedInputPer1K: 0.0005, outputPer1K: 0.008 },
  'gpt-4.1-mini': { inputPer1K: 0.0004, cachedInputPer1K: 0.0001, outputPer1K: 0.0016 },
  'gpt-4.1-nano': { inputPer1K: 0.0001, cachedInputPer1K: 0.000025, outputPer1K: 0.0004 },
  'gpt-4o': { inputPer1K: 0.0025, cachedInputPer1K: 0.00125, outputPer1K: 0.01 },
  'gpt-4o-mini': { inputPer1K: 0.00015, cachedInputPer1K: 0.000075, outputPer1K: 0.0006 },
  'o4-mini': { inputPer1K: 0.0011, cachedInputPer1K: 0.000275, outputPer1K: 0.0044 },
  offline: { inputPer1K: 0, outputPer1K: 0 },
};

/**
 * Parses MODEL_PRICING: `{"model": {"inputPer1K": 0.001, "outputPer1K": 0.002, "cachedInputPer1K": 0.0005}, ...}`
 * (cachedInputPer1K optional: unset, cached input costs the input rate) and lays it over the
 * defaults. Throws an Error naming what is wrong.
 */
export function parsePricing(json: string | undefined): PricingTable {
  if (!json || json.trim() === '') return DEFAULT_MODEL_PRICING;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new Error('MODEL_PRICING must be JSON: {"model": {"inputPer1K": number, "outputPer1K": number, "cachedInputPer1K"?: number}}');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error('MODEL_PRICING must be a JSON object keyed by model name');
  }
  const table: Record<string, ModelPrice> = { ...DEFAULT_MODEL_PRICING };
  for (const [model, price] of Object.entries(parsed)) {
    const p = price as Partial<Record<'inputPer1K' | 'outputPer1K' | 'cachedInputPer1K', unknown>> | null;
    const valid = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;
    if (!p || !valid(p.inputPer1K) || !valid(p.outputPer1K)) {
      throw new Error(`MODEL_PRICING.${model} needs non-negative numbers inputPer1K and outputPer1K`);
    }
    if (p.cachedInputPer1K !== undefined && !valid(p.cachedInputPer1K)) {
      throw new Error(`MODEL_PRICING.${model}.cachedInputPer1K must be a non-negative number`);
    }
    table[model] = {
      inputPer1K: p.inputPer1K,
      outputPer1K: p.outputPer1K,
      ...(p.cachedInputPer1K !== undefined ? { cachedInputPer1K: p.cachedInputPer1K } : {}),
    };
  }
  return table;
}

/** Exact model name first, else the longest priced prefix (dated snapshots: "gpt-4.1-mini-2025-04-14"). */
export function priceOf(table: PricingTable, model: string): ModelPrice | undefined {
  const exact = table[model];
  if (exact) return exact;
  let best: string | null = null;
  for (const name of Object.keys(table)) {
    if (model.startsWith(`${name}-`) && (best === null || name.length > best.length)) best = name;
  }
  return best === null ? undefined : table[best];
}

/** Token counts as a provider reported them for one call. */
export interface ReportedUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Part of inputTokens served from the provider's prompt cache. */
  readonly cachedInputTokens?: number;
}

/**
 * Spec 003: tokens as the provider reported them, else estimated as ceil(chars / 4) and
 * flagged; cost from the pricing table when the model is priced, cached input at its rate.
 */
export function usageOf(
  reported: ReportedUsage | null,
  sent: { readonly inputText: string; readonly outputText: string },
  price: ModelPrice | undefined,
): TurnUsage {
  const inputTokens = reported?.inputTokens ?? estimateTokens(sent.inputText);
  const outputTokens = reported?.outputTokens ?? estimateTokens(sent.outputText);
  const cachedInputTokens = Math.min(reported?.cachedInputTokens ?? 0, inputTokens);
  return {
    inputTokens,
    outputTokens,
    totalTokens: inputTokens + outputTokens,
    cachedInputTokens,
    estimatedCostUsd: costOf(price, inputTokens, outputTokens, cachedInputTokens),
    isEstimated: reported === null,
  };
}

/** Usage of several provider calls of one turn (tool continuations), summed. */
export function addUsage(a: TurnUsage | null, b: TurnUsage): TurnUsage {
  if (!a) return b;
  const cost = a.estimatedCostUsd === null || b.estimatedCostUsd === null ? null : round6(a.estimatedCostUsd + b.estimatedCostUsd);
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    totalTokens: a.totalTokens + b.totalTokens,
    cachedInputTokens: (a.cachedInputTokens ?? 0) + (b.cachedInputTokens ?? 0),
    estimatedCostUsd: cost,
    isEstimated: a.isEstimated || b.isEstimated,
  };
}

const round6 = (n: number): number => Math.round(n * 1e6) / 1e6;
