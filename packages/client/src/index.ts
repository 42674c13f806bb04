/**
 * The gateway's typed client, for web apps and Node: typed queries and mutations over fetch,
 * and subscriptions that resume without loss after any reconnect. The operations it knows
 * (src/client/operations) come typed from `./generated/operations`; a web app may bring its
 * own typed documents (any TypedDocumentNode) as well.
 */
export { createGatewayClient, type GatewayClient, type GatewayClientOptions } from './gateway-client';
export { GatewayError, type ClientErrorCode } from './errors';
export type { RequestOptions } from './http';
export type { RetryPolicy, SubscriptionObserver } from './resumable-subscription';
export type { ConnectionStatus, SubscriptionRequest, SubscriptionTransport, TokenSource, TransportFailure, TransportSink } from './transport';
export { sseTransport, type SseTransportOptions } from './sse-transport';
export { webSocketTransport, type WebSocketTransportOptions } from './ws-transport';
export * from './generated/operations';
