/** Spec 003: token counts and an optional cost estimate. */
export interface TurnUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
  /** Input tokens the provider served from its prompt cache; counted inside inputTokens. */
  readonly cachedInputTokens?: number;
  readonly estimatedCostUsd: number | null;
  /** True when the provider reported no counts and they were estimated as ceil(chars/4). */
  readonly isEstimated: boolean;
}

/** Spec 003 heuristic: about four characters per token. */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

export interface ModelPrice {
  readonly inputPer1K: number;
  readonly outputPer1K: number;
  /** Price of cached input tokens; unset prices them as uncached input. */
  readonly cachedInputPer1K?: number;
}

/** Cached input tokens (part of `inputTokens`) at the cached rate, the rest at the input rate. */
export function costOf(price: ModelPrice | undefined, inputTokens: number, outputTokens: number, cachedInputTokens = 0): number | null {
  if (!price) return null;
  const cached = Math.min(Math.max(0, cachedInputTokens), inputTokens);
  const cost =
    ((inputTokens - cached) / 1000) * price.inputPer1K +
    (cached / 1000) * (price.cachedInputPer1K ?? price.inputPer1K) +
    (outputTokens / 1000) * price.outputPer1K;
  return Math.round(cost * 1e6) / 1e6;
}
