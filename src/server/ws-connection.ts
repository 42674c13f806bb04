import type { FormattedExecutionResult, GraphQLFormattedError } from 'graphql';
import { GRAPHQL_TRANSPORT_WS_PROTOCOL, MessageType, parseMessage, stringifyMessage, type Message, type SubscribePayload } from 'graphql-ws';
import type { RawData, WebSocket } from 'ws';
import type { Caller } from '../domain/caller';
import type { LiveSubscription } from '../graphql/live/live-group';
import type { Logger } from '../logger';
import type { OperationSink } from './live-operations';
import { GatewayCloseCode } from './ws-limits';

/** `connection_init` accepted: who is connected, until when. */
export interface Accepted {
  readonly caller: Caller;
  /** When the token expires (ms since the epoch): the socket closes with 4403 then. */
  readonly expiresAt: number;
}

/** `connection_init` refused: the socket closes with this code. */
export interface Refused {
  readonly code: GatewayCloseCode;
  readonly reason: string;
}

/** What the gateway decides; the protocol itself is the Connection's. */
export interface ConnectionPolicy {
  readonly logger: Logger;
  readonly initTimeoutMs: number;
  /** Bytes a socket may have waiting to be sent before it is dropped as a slow consumer. */
  readonly maxBufferedBytes: number;
  accept(params: Readonly<Record<string, unknown>> | undefined): Promise<Accepted | Refused>;
  /** Runs one `subscribe` (subscription, query or mutation); answers through `operation`. */
  run(operation: Operation, payload: SubscribePayload, caller: Caller, running: number): Promise<void>;
  /** The socket is gone (after `accept`, if it was accepted). */
  closed(connection: Connection): void;
  /** A consumer was dropped for not reading (counted and logged by the policy). */
  slowConsumer(connection: Connection, bufferedBytes: number): void;
}

const TEXT = { binary: false } as const;
const CLOSING_BRACE = 0x7d;

/**
 * One graphql-transport-ws connection: `connection_init` within the timeout, then at most
 * one `connection_init`, `subscribe` only once acknowledged, ids unique while they run,
 * `ping`/`pong`, `complete` from either side. Per-socket state stays small (the socket, the
 * caller, a map of running operations): a subscription that waits for events holds no
 * pending promise, message or closure of its own.
 *
 * Subscription results arrive serialised once per group; each `next` frame is the
 * operation's prebuilt head, those bytes, and a brace. A socket that does not read is
 * not waited for: past `maxBufferedBytes` unsent, it is closed with 4413 (SlowConsumer),
 * its operations end at once, and the client resubscribes with afterEventId.
 */
export class Connection {
  readonly operations = new Map<string, Operation>();
  /** Answered the last keepalive ping (or has not been pinged yet). */
  alive = true;
  private acceptedAs: Accepted | null = null;
  private initReceived = false;
  private initTimer: NodeJS.Timeout | null = null;
  private ended = false;

  constructor(
    readonly socket: WebSocket,
    private readonly policy: ConnectionPolicy,
    /** Which slice of the keepalive interval pings it. */
    readonly pingSlot: number,
  ) {
    socket.on('close', () => this.onClose());
    // ws closes the socket itself on a protocol error (1009 over WS_MAX_PAYLOAD_BYTES, 1002, 1007): the client's doing.
    socket.on('error', (err) => policy.logger.debug({ err }, 'websocket protocol error; ws closed the socket'));
    if (socket.protocol !== GRAPHQL_TRANSPORT_WS_PROTOCOL) {
      this.close(GatewayCloseCode.SubprotocolNotAcceptable, 'Subprotocol not acceptable');
      return;
    }
    socket.on('pong', () => {
      this.alive = true;
    });
    socket.on('message', (data) => this.receive(data));
    this.initTimer = setTimeout(() => {
      if (!this.initReceived) this.close(GatewayCloseCode.ConnectionInitialisationTimeout, 'Connection initialisation timeout');
    }, policy.initTimeoutMs);
  }

  /** Set by `connection_init`. */
  get accepted(): Accepted | null {
    return this.acceptedAs;
  }

  /** Closes the socket with the code and ends every operation now (nothing more is sent). */
  close(code: GatewayCloseCode, reason: string): void {
    this.socket.close(code, reason);
    this.endOperations();
  }

  /** More than a quarter of the bound waiting: a catch-up should wait for a flush. */
  get congested(): boolean {
    return this.socket.bufferedAmount > this.policy.maxBufferedBytes / 4;
  }

  /** One `next` frame: head (with the operation id), the shared payload, `}`. */
  sendNext(head: string, headBytes: number, payload: Buffer, flushed?: () => void): void {
    const { socket } = this;
    const buffered = socket.bufferedAmount;
    if (socket.readyState !== socket.OPEN || buffered > this.policy.maxBufferedBytes) {
      if (socket.readyState === socket.OPEN) this.dropSlowConsumer(buffered);
      flushed?.();
      return;
    }
    const size = headBytes + payload.length + 1;
    // A frame that will wait behind others gets memory of its own: a slice of the shared pool
    // would keep the whole 8 KiB slab (and the other sockets' frames in it) alive while it waits.
    const frame = buffered > 0 ? Buffer.allocUnsafeSlow(size) : Buffer.allocUnsafe(size);
    frame.write(head, 0, headBytes);
    payload.copy(frame, headBytes);
    frame[size - 1] = CLOSING_BRACE;
    socket.send(frame, TEXT, flushed);
  }

  /** A protocol message other than `next` (ack, pong, error, complete): never held back. */
  sendMessage(text: string): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(text);
  }

  /** The operation ended on the server's side (complete or error). */
  forget(operation: Operation): void {
    if (this.operations.get(operation.id) === operation) this.operations.delete(operation.id);
  }

  private dropSlowConsumer(buffered: number): void {
    this.policy.slowConsumer(this, buffered);
    this.close(GatewayCloseCode.SlowConsumer, 'Slow consumer: reconnect and resume with afterEventId');
  }

  private receive(data: RawData): void {
    let message: Message;
    try {
      message = parseMessage(String(data));
    } catch {
      return this.close(GatewayCloseCode.BadRequest, 'Invalid message received');
    }
    switch (message.type) {
      case MessageType.ConnectionInit:
        return void this.init(message.payload);
      case MessageType.Ping:
        return this.sendMessage(stringifyMessage(message.payload ? { type: MessageType.Pong, payload: message.payload } : { type: MessageType.Pong }));
      case MessageType.Pong:
        return;
      case MessageType.Subscribe:
        return void this.subscribe(message.id, message.payload);
      case MessageType.Complete: {
        const operation = this.operations.get(message.id);
        this.operations.delete(message.id);
        operation?.cancel();
        return;
      }
      default:
        // Valid messages, but only a server sends them.
        return this.close(GatewayCloseCode.BadRequest, `Unexpected message of type ${message.type} received`);
    }
  }

  private async init(params: Readonly<Record<string, unknown>> | undefined): Promise<void> {
    if (this.initReceived) return this.close(GatewayCloseCode.TooManyRequests, 'Too many initialisation requests');
    this.initReceived = true;
    this.clearInitTimer();
    let decision: Accepted | Refused;
    try {
      decision = await this.policy.accept(params);
    } catch (err) {
      this.policy.logger.error({ err }, 'a WebSocket connection_init failed unexpectedly');
      return this.close(GatewayCloseCode.InternalServerError, 'Internal server error');
    }
    // The socket closed while the token was checked: give back the connection slot the policy just counted.
    if (this.ended) {
      if ('code' in decision) return;
      this.acceptedAs = decision;
      return this.policy.closed(this);
    }
    if ('code' in decision) return this.close(decision.code, decision.reason);
    this.acceptedAs = decision;
    this.sendMessage(stringifyMessage({ type: MessageType.ConnectionAck }));
  }

  private async subscribe(id: string, payload: SubscribePayload): Promise<void> {
    const accepted = this.acceptedAs;
    if (!accepted) return this.close(GatewayCloseCode.Unauthorized, 'Unauthorized');
    if (this.operations.has(id)) return this.close(GatewayCloseCode.SubscriberAlreadyExists, `Subscriber for ${id} already exists`);
    const operation = new Operation(id, this);
    // Registered before it runs: it counts against the limit, and `complete` can cancel it meanwhile.
    this.operations.set(id, operation);
    try {
      await this.policy.run(operation, payload, accepted.caller, this.operations.size);
    } catch (err) {
      this.policy.logger.error({ err, operationId: id }, 'a WebSocket operation failed unexpectedly');
      this.close(GatewayCloseCode.InternalServerError, 'Internal server error');
    }
  }

  private onClose(): void {
    this.clearInitTimer();
    this.endOperations();
    if (this.ended) return;
    this.ended = true;
    this.policy.closed(this);
  }

  private endOperations(): void {
    for (const operation of this.operations.values()) operation.cancel();
    this.operations.clear();
  }

  private clearInitTimer(): void {
    if (this.initTimer) clearTimeout(this.initTimer);
    this.initTimer = null;
  }
}

/**
 * One running operation of a connection, and the sink its subscription's payloads go to.
 * It keeps its frame head (`{"id":…,"type":"next","payload":`) ready, so sending a shared
 * payload costs one copy and no serialisation.
 */
export class Operation implements OperationSink {
  private live: LiveSubscription | null = null;
  private ended = false;
  private readonly head: string;
  private readonly headBytes: number;

  constructor(
    readonly id: string,
    private readonly connection: Connection,
  ) {
    this.head = `{"id":${JSON.stringify(id)},"type":"next","payload":`;
    this.headBytes = Buffer.byteLength(this.head);
  }

  /** Still wanted: not completed, cancelled, or ended by an error. */
  get running(): boolean {
    return !this.ended;
  }

  get congested(): boolean {
    return this.connection.congested;
  }

  /** The subscription now delivering to this operation; cancelled at once if the operation already ended. */
  attach(live: LiveSubscription): void {
    if (this.ended) live.cancel();
    else this.live = live;
  }

  next(payload: Buffer, flushed?: () => void): void {
    if (this.ended) return flushed?.();
    this.connection.sendNext(this.head, this.headBytes, payload, flushed);
  }

  /** A result of this operation alone (a query's, or the errors of a refused subscription). */
  result(result: FormattedExecutionResult): void {
    this.next(Buffer.from(JSON.stringify(result)));
  }

  complete(): void {
    if (this.end()) this.connection.sendMessage(stringifyMessage({ id: this.id, type: MessageType.Complete }));
  }

  error(errors: readonly GraphQLFormattedError[]): void {
    if (this.end()) this.connection.sendMessage(stringifyMessage({ id: this.id, type: MessageType.Error, payload: errors }));
  }

  /** The client completed it or went away: stop, send nothing. */
  cancel(): void {
    this.ended = true;
    this.live?.cancel();
    this.live = null;
  }

  private end(): boolean {
    if (this.ended) return false;
    this.ended = true;
    this.live = null;
    this.connection.forget(this);
    return true;
  }
}
