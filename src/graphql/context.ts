import type { Caller } from '../domain/caller';
import type { Loaders } from './loaders';
import type { ResponseBudget } from './response-budget';
import type { Services } from './services';

/** What every resolver receives: who asks, their own loaders, and the services. */
export interface GraphQLContext {
  readonly caller: Caller;
  readonly loaders: Loaders;
  readonly services: Services;
  readonly requestId: string;
  /** List items this operation's response may still hold (one budget per operation or subscription event). */
  readonly budget: ResponseBudget;
}
