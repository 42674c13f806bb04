import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { DomainError } from '../domain/errors';
import type { Logger } from '../logger';
import type { EventBus } from './event-bus.port';
import { reconnectWhenSilent, redisRetryStrategy } from './redis-connection';
import { decodeOutputDelta, decodeStatusEvent, encodeOutputDelta, encodeStatusEvent } from './event-wire';
import { DEFAULT_OUTPUT_LIMITS, type OutputBufferLimits } from './output-buffer';
import type { TurnStatusEvent } from './turn-events';
import type { TurnOutputDelta, TurnRef } from './turn-output.port';

export interface RedisEventBusOptions {
  readonly url: string;
  readonly keyPrefix: string;
  readonly logger: Logger;
  readonly outputLimits?: Pick<OutputBufferLimits, 'streamingTtlMs' | 'endedTtlMs'>;
  /** A command or PING unanswered for this long counts as Redis being away (the connection is then renewed). */
  readonly timeoutMs?: number;
}

const LOG_EVERY_MS = 10_000;

/**
 * Redis pub/sub between instances. Status events go to one channel per deployment (every
 * instance needs them all to keep them in order); text deltas go to one channel per turn
 * (only instances with a subscriber to that turn listen), and each turn's text so far is a
 * Redis list with a TTL, so a late joiner on any instance can read it.
 *
 * Two connections: `commands` publishes and reads, with the offline queue off, so while
 * Redis is down a publish fails at once (counted and logged) instead of piling up or
 * blocking; `subscriber` only subscribes, with the ready check off (a SUBSCRIBE racing the
 * ready check can lose messages) and re-subscribes by itself after a reconnect, which is
 * then announced through `onResync`. Both are dropped and reconnected when they stop
 * answering PINGs (a partition that drops packets raises no error by itself).
 */
export class RedisEventBus implements EventBus {
  private readonly commands: Redis;
  private readonly subscriber: Redis;
  private readonly instanceId = randomUUID();
  private readonly statusChannel: string;
  private readonly statusListeners = new Set<(event: TurnStatusEvent) => void>();
  private readonly outputListeners = new Map<string, Set<(delta: TurnOutputDelta) => void>>();
  private readonly resyncListeners = new Set<() => void>();
  private readonly limits: Pick<OutputBufferLimits, 'streamingTtlMs' | 'endedTtlMs'>;
  private readonly logger: Logger;
  private readonly prefix: string;
  /** True from a lost subscriber connection until it is back and re-subscribed. */
  private missedMessages = true;
  private readonly lastLogged = new Map<string, number>();
  private droppedSinceLog = 0;
  private readonly timeoutMs: number;
  private readonly stopWatching: (() => void)[];

  constructor(options: RedisEventBusOptions) {
    this.logger = options.logger;
    this.timeoutMs = options.timeoutMs ?? 2_000;
    this.prefix = options.keyPrefix;
    this.limits = options.outputLimits ?? DEFAULT_OUTPUT_LIMITS;
    this.statusChannel = `${this.prefix}turn-status`;
    this.commands = new Redis(options.url, {
      connectionName: 'gateway-commands',
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: this.timeoutMs,
      retryStrategy: redisRetryStrategy,
    });
    this.subscriber = new Redis(options.url, {
      connectionName: 'gateway-subscriber',
      enableReadyCheck: false,
      autoResubscribe: true,
      maxRetriesPerRequest: null,
      retryStrategy: redisRetryStrategy,
    });
    const watch = { intervalMs: Math.max(250, this.timeoutMs), timeoutMs: this.timeoutMs };
    this.stopWatching = [reconnectWhenSilent(this.commands, watch), reconnectWhenSilent(this.subscriber, watch)];
    for (const [name, connection] of [
      ['commands', this.commands],
      ['subscriber', this.subscriber],
    ] as const) {
      connection.on('error', (err: Error) => this.logRateLimited({ err, connection: name }, 'redis connection error'));
    }
    this.subscriber.on('close', () => {
      this.missedMessages = true;
    });
    this.subscriber.on('ready', () => void this.resync());
    this.subscriber.on('message', (channel: string, message: string) => this.receive(channel, message));
    this.subscriber.subscribe(this.statusChannel).catch((err: unknown) => this.logRateLimited({ err }, 'redis subscribe failed'));
  }

  turnStatusChanged(event: TurnStatusEvent): void {
    this.deliverStatus(event);
    this.fire(this.commands.publish(this.statusChannel, this.envelope(encodeStatusEvent(event))));
  }

  append(delta: TurnOutputDelta): void {
    this.deliverOutput(delta);
    const key = this.outputKey(delta.turnId);
    const encoded = encodeOutputDelta(delta);
    this.fire(
      this.commands
        .multi()
        .rpush(key, encoded)
        .pexpire(key, this.limits.streamingTtlMs)
        .publish(this.outputChannel(delta.turnId), this.envelope(encoded))
        .exec(),
    );
  }

  end(turn: TurnRef): void {
    this.fire(this.commands.pexpire(this.outputKey(turn.turnId), this.limits.endedTtlMs));
  }

  onTurnStatus(listener: (event: TurnStatusEvent) => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  async onTurnOutput(turn: TurnRef, listener: (delta: TurnOutputDelta) => void): Promise<() => void> {
    this.assertConnected(this.subscriber);
    const channel = this.outputChannel(turn.turnId);
    let listeners = this.outputListeners.get(channel);
    if (!listeners) {
      this.outputListeners.set(channel, (listeners = new Set()));
      try {
        await this.subscriber.subscribe(channel);
      } catch (e) {
        if (listeners.size === 0) this.outputListeners.delete(channel);
        throw unavailable(e);
      }
    }
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      if (listeners.size > 0 || this.outputListeners.get(channel) !== listeners) return;
      this.outputListeners.delete(channel);
      this.subscriber.unsubscribe(channel).catch(() => undefined);
    };
  }

  async outputSoFar(turn: TurnRef, fromIndex: number): Promise<TurnOutputDelta[]> {
    this.assertConnected(this.commands);
    let raw: string[];
    try {
      raw = await this.commands.lrange(this.outputKey(turn.turnId), 0, -1);
    } catch (e) {
      throw unavailable(e);
    }
    const deltas: TurnOutputDelta[] = [];
    for (const text of raw) {
      const delta = decodeOutputDelta(text);
      if (delta && delta.turnId === turn.turnId && delta.index >= fromIndex) deltas.push(delta);
    }
    return deltas.sort((a, b) => a.index - b.index);
  }

  onResync(listener: () => void): () => void {
    this.resyncListeners.add(listener);
    return () => this.resyncListeners.delete(listener);
  }

  async check(): Promise<void> {
    this.assertConnected(this.commands);
    this.assertConnected(this.subscriber);
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.commands.ping(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`redis did not answer PING within ${this.timeoutMs} ms`)), this.timeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    for (const stop of this.stopWatching) stop();
    this.statusListeners.clear();
    this.outputListeners.clear();
    this.resyncListeners.clear();
    await Promise.all(
      [this.commands, this.subscriber].map(async (connection) => {
        let timer: NodeJS.Timeout | undefined;
        // QUIT flushes pending publishes; a connection that is down would never answer it.
        await Promise.race([
          connection.quit().catch(() => undefined),
          new Promise((r) => {
            timer = setTimeout(r, 1_000);
          }),
        ]);
        clearTimeout(timer);
        connection.disconnect();
      }),
    );
  }

  private async resync(): Promise<void> {
    if (!this.missedMessages) return;
    try {
      // Confirmed only after every earlier (re-)SUBSCRIBE on this connection took effect.
      await this.subscriber.subscribe(this.statusChannel);
    } catch (e) {
      this.logRateLimited({ err: e }, 'redis re-subscribe failed');
      return;
    }
    this.missedMessages = false;
    this.logger.info('redis event bus connected; catching up on anything missed');
    for (const listener of this.resyncListeners) this.safely(listener);
  }

  private receive(channel: string, message: string): void {
    const split = message.indexOf('\n');
    if (split < 0) return;
    // This instance already delivered its own messages when it published them.
    if (message.slice(0, split) === this.instanceId) return;
    const body = message.slice(split + 1);
    if (channel === this.statusChannel) {
      const event = decodeStatusEvent(body);
      if (event) this.deliverStatus(event);
      else this.logRateLimited({ channel }, 'dropped a malformed status event from redis');
      return;
    }
    const delta = decodeOutputDelta(body);
    if (delta && channel === this.outputChannel(delta.turnId)) this.deliverOutput(delta);
    else this.logRateLimited({ channel }, 'dropped a malformed output delta from redis');
  }

  private deliverStatus(event: TurnStatusEvent): void {
    for (const listener of this.statusListeners) this.safely(() => listener(event));
  }

  private deliverOutput(delta: TurnOutputDelta): void {
    for (const listener of this.outputListeners.get(this.outputChannel(delta.turnId)) ?? []) this.safely(() => listener(delta));
  }

  private envelope(body: string): string {
    return `${this.instanceId}\n${body}`;
  }

  private outputChannel(turnId: string): string {
    return `${this.prefix}turn-output:${turnId}`;
  }

  private outputKey(turnId: string): string {
    return `${this.prefix}turn-text:${turnId}`;
  }

  private assertConnected(connection: Redis): void {
    if (connection.status !== 'ready') throw unavailable(new Error(`redis connection is ${connection.status}`));
  }

  private fire(command: Promise<unknown>): void {
    command.catch((err: unknown) => {
      this.droppedSinceLog++;
      const dropped = this.droppedSinceLog;
      if (this.logRateLimited({ err, dropped }, 'redis publishes failed; status subscribers catch up from the database later')) {
        this.droppedSinceLog = 0;
      }
    });
  }

  /** Logs each kind of message at most every LOG_EVERY_MS; true when it did. */
  private logRateLimited(details: Record<string, unknown>, message: string): boolean {
    const now = Date.now();
    if (now - (this.lastLogged.get(message) ?? 0) < LOG_EVERY_MS) return false;
    this.lastLogged.set(message, now);
    this.logger.warn(details, message);
    return true;
  }

  private safely(deliver: () => void): void {
    try {
      deliver();
    } catch (e) {
      this.logger.error({ err: e }, 'an event listener failed');
    }
  }
}

const unavailable = (cause: unknown): DomainError => {
  const error = new DomainError('SERVICE_UNAVAILABLE', 'live delivery is temporarily unavailable; try again shortly');
  error.cause = cause;
  return error;
};
