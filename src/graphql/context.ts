import type { Caller } from '../domain/caller';
import type { Loaders } from './loaders';
import type { Services } from './services';

/** What every resolver receives: who asks, their own loaders, and the services. */
export interface GraphQLContext {
  readonly caller: Caller;
  readonly loaders: Loaders;
  readonly services: Services;
  readonly requestId: string;
}
