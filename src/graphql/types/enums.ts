import { registerEnumType } from 'type-graphql';
import { SESSION_ORDERS, type SessionOrder } from '../../domain/session';
import { TURN_STATUSES, type TurnStatus } from '../../domain/turn-status';

const enumOf = <T extends string>(values: readonly T[]) =>
  Object.fromEntries(values.map((v) => [v, v])) as { [K in T]: K };

export const AgentSessionTurnStatus = enumOf<TurnStatus>(TURN_STATUSES);
registerEnumType(AgentSessionTurnStatus, { name: 'AgentSessionTurnStatus' });

export const AgentSessionOrder = enumOf<SessionOrder>(SESSION_ORDERS);
registerEnumType(AgentSessionOrder, { name: 'AgentSessionOrder' });
