import type { PricingTable } from '../domain/pricing';

/** What the turn pipeline reads of the configuration (config.ts's ExecuteConfig provides it). */
export interface PipelineSettings {
  /** Model when neither the conversation nor the agent context names one. */
  readonly defaultModel: string;
  readonly chainTtlSeconds: number;
  readonly toolResultTimeoutSeconds: number;
  readonly turnLeaseSeconds: number;
  readonly modelPricing: PricingTable;
  /** MAX_SERVER_TOOL_ROUNDS: provider rounds per run whose server tool calls the gateway runs. */
  readonly maxServerToolRounds: number;
  /** MAX_CLIENT_TOOL_ROUNDS: how many times one turn may pause for client tools; asking once more fails it. */
  readonly maxClientToolRounds: number;
}
