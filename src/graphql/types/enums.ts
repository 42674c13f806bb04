import { registerEnumType } from 'type-graphql';
import { CHAIN_RESTART_REASONS, type ChainRestartReason } from '../../domain/chain-restart';
import { SNIPPET_SKIP_REASONS, type SnippetSkipReason } from '../../domain/request-metadata';
import { SESSION_ORDERS, type SessionOrder } from '../../domain/session';
import { TURN_STATUSES, type TurnStatus } from '../../domain/turn-status';

const enumOf = <T extends string>(values: readonly T[]) =>
  Object.fromEntries(values.map((v) => [v, v])) as { [K in T]: K };

export const AgentSessionTurnStatus = enumOf<TurnStatus>(TURN_STATUSES);
registerEnumType(AgentSessionTurnStatus, { name: 'AgentSessionTurnStatus' });

export const AgentSessionOrder = enumOf<SessionOrder>(SESSION_ORDERS);
registerEnumType(AgentSessionOrder, { name: 'AgentSessionOrder' });

export const OpenAIChainRestartReason = enumOf<ChainRestartReason>(CHAIN_RESTART_REASONS);
registerEnumType(OpenAIChainRestartReason, {
  name: 'OpenAIChainRestartReason',
  description: "Why a turn's provider conversation started afresh instead of continuing the session's last one.",
  valuesConfig: {
    FIRST_TURN: { description: 'The first turn of the session.' },
    EXPIRED: { description: 'The last completed response was older than OPENAI_CHAIN_TTL_SECONDS.' },
    LOST_BY_PROVIDER: { description: 'The provider no longer knew the previous response; the turn retried on a new, preloaded chain.' },
    NO_USABLE_PREVIOUS_RESPONSE: { description: 'No earlier turn completed with a provider response.' },
  },
});

export const SkippedSnippetReason = enumOf<SnippetSkipReason>(SNIPPET_SKIP_REASONS);
registerEnumType(SkippedSnippetReason, {
  name: 'SkippedSnippetReason',
  valuesConfig: {
    ACTIVE_FILE_IS_CURRENT: { description: "The snippet's file is an active file of the live chain; the developer's local version wins over the index." },
  },
});
