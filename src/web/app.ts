import type { GatewayClient, GatewayError, ViewerQuery } from '../../packages/client/src';

/** What every page gets: the signed-in client and who is signed in. */
export interface App {
  readonly client: GatewayClient;
  readonly viewer: ViewerQuery['me'];
  readonly isAdmin: boolean;
  /** Back to the sign-in form, with a message saying why (null: the user chose to). */
  signOut(message: string | null): void;
  /** Any error from the gateway: a refused or expired token signs out; pages show the rest. */
  onError(error: GatewayError): void;
}

/** A mounted page; `live` says whether it follows subscriptions (the header shows their state). */
export interface Page {
  readonly live: boolean;
  dispose(): void;
}
