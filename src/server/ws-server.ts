import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ExecutionArgs, ExecutionResult } from 'graphql';
import { handleProtocols, makeServer, type Context, type ServerOptions, type WebSocket as GraphQLWsSocket } from 'graphql-ws';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Config } from '../config';
import type { Caller } from '../domain/caller';
import type { Logger } from '../logger';
import { authorizationOf } from './connection-params';
import type { LiveOperations, Ready } from './live-operations';
import { LiveStream, takeSharedPayload, type Congestion } from './ws-live-stream';
import { ConnectionsPerUser, GatewayCloseCode, userKeyOf } from './ws-limits';

export interface WebSocketDeps {
  readonly config: Config;
  readonly logger: Logger;
  /** Auth, limits and execution shared with the SSE transport. */
  readonly operations: LiveOperations;
  readonly httpServer: Server;
}

export interface GraphQLWebSocketServer {
  /** Open WebSocket connections. */
  readonly connections: number;
  /** Sockets closed with 4413 so far because they did not read (WS_MAX_BUFFERED_BYTES). */
  readonly slowConsumersDropped: number;
  /** Refuses new WebSocket upgrades (shutdown has begun). */
  stopAccepting(): void;
  /** Closes every connection with 1012 (service restart), waiting at most `graceMs` for clients to answer. */
  close(graceMs: number): Promise<void>;
}

const PATH = '/graphql';
/** Token expiry is checked this often (a JWT's `exp` has one-second resolution anyway). */
const EXPIRY_SWEEP_MS = 1_000;
/** Keepalive pings go out in this many slices of the interval, not to every socket at once. */
const PING_SLICES = 10;
const TEXT = { binary: false } as const;
/** What graphql-ws's `next` message ends with when its payload is a SharedPayload (see ws-live-stream.ts). */
const SHARED_TAIL = '"payload":null}';

/** What every socket of the server shares: its bound on unsent bytes, and what to do when a socket breaks it or fails. */
interface SocketPolicy {
  readonly maxBufferedBytes: number;
  slowConsumer(connection: Connection, bufferedBytes: number): void;
  failed(connection: Connection, error: unknown): void;
}

/**
 * One socket as graphql-ws's server sees it (its WebSocket adapter: `send`, `close`,
 * `onMessage`) and what the gateway keeps beside it (who is connected, keepalive); it is also
 * graphql-ws's `extra`. `send` is where the slow-reader cut and the shared frames live.
 */
class Connection implements GraphQLWsSocket, Congestion {
  caller: Caller | null = null;
  /** When the token expires (ms since the epoch): the socket closes with 4403 then. */
  expiresAt = Infinity;
  /** Answered the last keepalive ping (or has not been pinged yet). */
  alive = true;
  private ending = false;
  private endedAs: { readonly code: number; readonly reason: string } | null = null;
  private closedHook: ((code: number, reason: string) => Promise<void>) | null = null;
  private received: ((data: string) => Promise<void>) | null = null;
  private initTimer: NodeJS.Timeout | null = null;
  /** One handler per socket for what its messages' handling throws (not one closure per message). */
  private readonly failed = (err: unknown): void => this.policy.failed(this, err);

  constructor(
    readonly socket: WebSocket,
    /** Which slice of the keepalive interval pings it. */
    readonly pingSlot: number,
    private readonly policy: SocketPolicy,
  ) {}

  /** Closes the socket with 4408, as graphql-ws would, unless `connection_init` arrives within `ms`. */
  awaitInit(ms: number): void {
    this.initTimer = setTimeout(() => this.close(GatewayCloseCode.ConnectionInitialisationTimeout, 'Connection initialisation timeout'), ms);
  }

  initialised(): void {
    if (this.initTimer) clearTimeout(this.initTimer);
    this.initTimer = null;
  }

  get protocol(): string {
    return this.socket.protocol;
  }

  get congested(): boolean {
    return this.socket.bufferedAmount > this.policy.maxBufferedBytes / 4;
  }

  get isEnding(): boolean {
    return this.ending;
  }

  /**
   * A message graphql-ws stringified. A `next` whose payload was a group's SharedPayload
   * (ws-live-stream.ts) goes out as the message's head, the shared bytes, and a brace. A
   * socket with more than `maxBufferedBytes` unsent is not waited for: it is closed with 4413.
   */
  send(data: string): void {
    const shared = takeSharedPayload();
    const { socket } = this;
    if (socket.readyState !== socket.OPEN || this.ending) return shared?.flushed?.();
    if (!shared) return socket.send(data);
    const buffered = socket.bufferedAmount;
    if (buffered > this.policy.maxBufferedBytes) {
      this.policy.slowConsumer(this, buffered);
      this.close(GatewayCloseCode.SlowConsumer, 'Slow consumer: reconnect and resume with afterEventId');
      return shared.flushed?.();
    }
    if (!data.endsWith(SHARED_TAIL)) throw new Error('a shared payload in a message that is not a next message');
    const headBytes = Buffer.byteLength(data) - 'null}'.length;
    const size = headBytes + shared.bytes.length + 1;
    // A frame that will wait behind others gets memory of its own: a slice of the shared pool
    // would keep the whole 8 KiB slab (and the other sockets' frames in it) alive while it waits.
    const frame = buffered > 0 ? Buffer.allocUnsafeSlow(size) : Buffer.allocUnsafe(size);
    frame.write(data, 0, headBytes);
    shared.bytes.copy(frame, headBytes);
    frame[size - 1] = 0x7d; // }
    socket.send(frame, TEXT, shared.flushed);
  }

  /** Closes the socket and ends its operations now: nothing more is sent, whatever the client does. */
  close(code = GatewayCloseCode.InternalServerError, reason = ''): void {
    this.socket.close(code, reason);
    this.end(code, reason);
  }

  onMessage(received: (data: string) => Promise<void>): void {
    this.received = received;
  }

  /** A message the socket received (the server's one `message` listener hands it over). */
  receive(data: Buffer): void {
    if (!this.ending && this.received) this.received(data.toString('utf8')).catch(this.failed);
  }

  /** graphql-ws's end of the connection (it ends every operation): run once, at the first close. */
  set closed(hook: (code: number, reason: string) => Promise<void>) {
    this.closedHook = hook;
    // graphql-ws may close the socket while it opens it (a subprotocol it does not speak).
    if (this.endedAs) void hook(this.endedAs.code, this.endedAs.reason);
  }

  end(code: number, reason: string): void {
    if (this.ending) return;
    this.ending = true;
    this.initialised();
    this.endedAs = { code, reason };
    void this.closedHook?.(code, reason);
  }
}

type ConnectionContext = Context<Record<string, unknown>, Connection>;

/**
 * GraphQL over WebSocket (graphql-transport-ws), graphql-ws's own server (`makeServer`) on the
 * HTTP server's port and path. What the gateway adds comes through its hooks and the socket
 * adapter: `connection_init` carries `{ authorization: "Bearer <jwt>" }` (any case, or under
 * `headers`), a missing or bad token closes with 4403 (onConnect), and the socket closes with
 * 4403 when the token expires. Every operation is checked by LiveOperations (onSubscribe), as
 * over SSE, and a subscription joins the executor's shared groups (subscribe), whose one
 * serialised result per event goes to each socket as is (onNext, send). Limits per socket and
 * user: message size (1009), token size (4431), sockets per user (4429), operations at once
 * per socket (TOO_MANY_SUBSCRIPTIONS, the socket stays open), unsent bytes (4413: a socket
 * that does not read is not waited for, its operations end at once, and the client
 * resubscribes with afterEventId).
 */
export function attachGraphQLWebSocket(deps: WebSocketDeps): GraphQLWebSocketServer {
  const { config, logger, operations } = deps;
  const { live } = config;
  // ws closes a socket whose message is larger with 1009 (message too big).
  const wss = new WebSocketServer({ noServer: true, maxPayload: live.wsMaxPayloadBytes, handleProtocols });
  /** Every socket's Connection: the socket events' handlers are one function each for the server, not closures per socket. */
  const connections = new Map<WebSocket, Connection>();
  const connectionsPerUser = new ConnectionsPerUser(live.wsMaxConnectionsPerUser);
  /** What onSubscribe readied, for the hooks graphql-ws calls with the same arguments. */
  const readied = new WeakMap<ExecutionArgs, { readonly ready: Ready; readonly connection: Connection }>();
  let accepting = true;
  let slowConsumersDropped = 0;
  let opened = 0;

  const options: ServerOptions<Record<string, unknown>, Connection> = {
    // Our own timer (Connection.awaitInit), cleared at connection_init: graphql-ws's runs its full
    // course, keeping memory per socket for WS_CONNECTION_INIT_TIMEOUT_MS after every connect (docs/performance.md).
    connectionInitWaitTimeout: 0,

    async onConnect(ctx: ConnectionContext) {
      const connection = ctx.extra;
      connection.initialised();
      const admission = await operations.admit(authorizationOf(ctx.connectionParams));
      if (admission.kind !== 'accepted') {
        const code = { 'token-too-large': GatewayCloseCode.TokenTooLarge, forbidden: GatewayCloseCode.Forbidden, unavailable: GatewayCloseCode.TryAgainLater }[admission.kind];
        connection.close(code, admission.reason);
        return false;
      }
      // The socket closed while the token was checked (onClose has run): take no connection slot.
      if (connection.socket.readyState !== connection.socket.OPEN) return false;
      const { caller, expiresAt } = admission;
      if (!connectionsPerUser.tryOpen(userKeyOf(caller))) {
        connection.close(GatewayCloseCode.TooManyRequests, `Too many connections: at most ${live.wsMaxConnectionsPerUser} per user`);
        return false;
      }
      connection.caller = caller;
      connection.expiresAt = expiresAt;
      // graphql-ws would keep the parsed payload (the token) for the socket's whole life; nothing reads it again.
      delete (ctx as { connectionParams?: unknown }).connectionParams;
      return true;
    },

    onSubscribe(ctx: ConnectionContext, _id, payload) {
      const connection = ctx.extra;
      // graphql-ws lists the operation before this hook: the count includes it.
      const running = Object.keys(ctx.subscriptions).length;
      const prepared = operations.prepare(payload, connection.caller as Caller, running, 'ws');
      if (prepared.kind === 'refused') return [...prepared.errors];
      // graphql-ws holds the message while the operation runs: let it hold the cached document's text, not a copy per subscriber.
      const text = prepared.args.document.loc?.source.body;
      if (text !== undefined && text === payload.query) (payload as { query: string }).query = text;
      readied.set(prepared.args, { ready: prepared, connection });
      return prepared.args;
    },

    onError: (_ctx, _id, _payload, errors) => operations.formatErrors(errors),

    // Queries and mutations: graphql-ws's default execute would run them without our formatting.
    execute: (args) => startOperation(args),
    subscribe: (args) => startOperation(args),

    // Results reach onNext formatted (or as a group's shared bytes): sent as they are.
    onNext: (_ctx, _id, _payload, _args, result) => result,

    onClose(ctx: ConnectionContext) {
      const connection = ctx.extra;
      connections.delete(connection.socket);
      if (connection.caller) connectionsPerUser.close(userKeyOf(connection.caller));
    },
  };
  const server = makeServer(options);

  /** Starts what onSubscribe readied: a LiveStream for a live subscription, else the formatted result. */
  async function startOperation(args: ExecutionArgs): Promise<AsyncGenerator<ExecutionResult> | ExecutionResult> {
    const entry = readied.get(args);
    if (!entry) throw new Error('an operation reached graphql-ws without onSubscribe readying it');
    readied.delete(args);
    const stream = new LiveStream(entry.connection);
    const started = await operations.start(entry.ready, stream.sink);
    // graphql-ws holds `args` while the operation runs; the subscriber's own context (loaders,
    // budget) is needed no more once it started: a group executes each event with its own.
    args.contextValue = undefined;
    if ('live' in started) {
      stream.attach(started.live);
      // The stream yields SharedPayloads, which onNext passes on and send frames; graphql-ws only sees results.
      return stream as unknown as AsyncGenerator<ExecutionResult>;
    }
    // Formatted already (coded, masked); onNext passes it on unchanged.
    return started.result as ExecutionResult;
  }

  const policy: SocketPolicy = {
    maxBufferedBytes: live.wsMaxBufferedBytes,
    slowConsumer(connection, bufferedBytes) {
      slowConsumersDropped++;
      const caller = connection.caller;
      logger.warn({ userId: caller?.userId, orgId: caller?.orgId, bufferedBytes }, 'WebSocket closed: slow consumer (WS_MAX_BUFFERED_BYTES)');
    },
    // graphql-ws throws from its message handler for a client's protocol error, and so does anything unexpected.
    failed(connection, err) {
      const message = err instanceof Error ? err.message : String(err);
      // A well-formed message only a server sends (`next`, `error`, `connection_ack`): the protocol's 4400.
      if (message.startsWith('Unexpected message of type')) return connection.close(GatewayCloseCode.BadRequest, message);
      logger.error({ err, userId: connection.caller?.userId }, 'a WebSocket operation failed unexpectedly');
      connection.close(GatewayCloseCode.InternalServerError, 'Internal server error');
    },
  };

  // ws closes the socket itself on a protocol error (1009 over WS_MAX_PAYLOAD_BYTES, 1002, 1007): the client's doing.
  const onSocketError = (err: Error) => logger.debug({ err }, 'websocket protocol error; ws closed the socket');
  function onSocketMessage(this: WebSocket, data: Buffer): void {
    connections.get(this)?.receive(data);
  }
  function onSocketPong(this: WebSocket): void {
    const connection = connections.get(this);
    if (connection) connection.alive = true;
  }
  function onSocketClose(this: WebSocket, code: number, reason: Buffer): void {
    connections.get(this)?.end(code, String(reason));
  }

  const onConnection = (socket: WebSocket) => {
    const connection = new Connection(socket, opened++ % PING_SLICES, policy);
    connections.set(socket, connection);
    connection.awaitInit(live.wsConnectionInitTimeoutMs);
    socket.on('error', onSocketError);
    socket.on('message', onSocketMessage);
    // Pongs only answer the keepalive's pings.
    if (live.wsKeepAliveMs > 0) socket.on('pong', onSocketPong);
    connection.closed = server.opened(connection, connection);
    socket.on('close', onSocketClose);
  };

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (!accepting || path !== PATH) {
      socket.end(`HTTP/1.1 ${accepting ? '404 Not Found' : '503 Service Unavailable'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(request, socket, head, onConnection);
  };
  deps.httpServer.on('upgrade', onUpgrade);

  const expirySweep = setInterval(() => {
    const now = Date.now();
    for (const connection of connections.values()) {
      if (connection.expiresAt <= now) connection.close(GatewayCloseCode.Forbidden, 'Forbidden: token expired');
    }
  }, EXPIRY_SWEEP_MS);
  expirySweep.unref();
  const keepAlive = live.wsKeepAliveMs > 0 ? startKeepAlive(connections, live.wsKeepAliveMs) : null;

  return {
    get connections() {
      return wss.clients.size;
    },
    get slowConsumersDropped() {
      return slowConsumersDropped;
    },
    stopAccepting() {
      accepting = false;
    },
    async close(graceMs: number) {
      accepting = false;
      clearInterval(expirySweep);
      if (keepAlive) clearInterval(keepAlive);
      for (const connection of connections.values()) connection.close(GatewayCloseCode.ServiceRestart, 'Service restart: reconnect and resume with afterEventId');
      const deadline = Date.now() + graceMs;
      while (wss.clients.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      for (const socket of wss.clients) socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      deps.httpServer.off('upgrade', onUpgrade);
      logger.debug('websocket server closed');
    },
  };
}

/**
 * Pings every socket once per interval and drops one that did not answer the previous
 * ping. The sockets are pinged a slice at a time, so ten thousand pings do not all go
 * out (and hold up the process) at the same moment. (graphql-ws's useServer would keep a
 * timer per socket.)
 */
function startKeepAlive(connections: ReadonlyMap<WebSocket, Connection>, intervalMs: number): NodeJS.Timeout {
  let tick = 0;
  const timer = setInterval(
    () => {
      const slice = tick++ % PING_SLICES;
      for (const connection of connections.values()) {
        if (connection.pingSlot !== slice) continue;
        const { socket } = connection;
        if (socket.readyState !== socket.OPEN) continue;
        if (!connection.alive) {
          socket.terminate();
          continue;
        }
        connection.alive = false;
        socket.ping();
      }
    },
    Math.max(1, Math.floor(intervalMs / PING_SLICES)),
  );
  timer.unref();
  return timer;
}
