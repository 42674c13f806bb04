import { randomUUID } from 'node:crypto';
import {
  execute,
  getOperationAST,
  GraphQLError,
  NoSchemaIntrospectionCustomRule,
  OperationTypeNode,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionArgs,
  type FormattedExecutionResult,
  type GraphQLFormattedError,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import type { Config } from '../config';
import type { Caller } from '../domain/caller';
import { isDomainError } from '../domain/errors';
import type { GraphQLContext } from '../graphql/context';
import type { LiveSubscription, SubscriberSink } from '../graphql/live/live-group';
import { formatResult, type SubscriptionExecutor } from '../graphql/live/subscription-executor';
import { Loaders } from '../graphql/loaders';
import type { Protection } from '../graphql/protection';
import type { Services } from '../graphql/services';
import type { Logger } from '../logger';
import type { TokenVerifier } from '../auth/token-verifier.port';
import { authenticate } from './auth';
import { ConnectionsPerUser, DocumentCache, MAX_TOKEN_BYTES, userKeyOf } from './ws-limits';

/** One operation of a live transport (a WebSocket operation, an SSE stream): where its results go. */
export interface OperationSink extends SubscriberSink {
  /** The subscription now delivering to this operation; cancelled at once if the operation already ended. */
  attach(live: LiveSubscription): void;
  /** A result of this operation alone (a query's, or the errors of a refused subscription). */
  result(result: FormattedExecutionResult): void;
  /** Refused: the operation ends with these errors. */
  error(errors: readonly GraphQLFormattedError[]): void;
}

/** What a client sent to start an operation, parsed at the edge. */
export interface OperationRequest {
  readonly query: string;
  readonly operationName?: string | null;
  readonly variables?: Readonly<Record<string, unknown>> | null;
}

/** A bearer token accepted, or why not. */
export type Admission =
  | { readonly kind: 'accepted'; readonly caller: Caller; readonly expiresAt: number }
  | { readonly kind: 'token-too-large' | 'forbidden'; readonly reason: string }
  /** The identity provider's keys cannot be fetched right now: not the token's fault, try again. */
  | { readonly kind: 'unavailable'; readonly reason: string };

/** One operation as it was answered (a subscription: once subscribed or refused), for metrics and traces. */
export interface OperationRecord {
  readonly kind: OperationTypeNode | null;
  readonly operationName: string | null;
  readonly transport: LiveTransport;
  /** "ok" or the first error's code. */
  readonly outcome: string;
  /** performance.timeOrigin-relative start and end, in ms. */
  readonly startedAt: number;
  readonly endedAt: number;
}

export type OperationObserver = (record: OperationRecord) => void;

/** An operation checked and ready to run, with what observes its outcome. */
export interface Ready {
  readonly kind: 'ready';
  readonly operation: OperationTypeNode;
  readonly args: ExecutionArgs;
  readonly context: GraphQLContext;
  /** Records the operation's outcome ("ok" or the first error's code) once it is answered. */
  readonly done: (outcome: string) => void;
}

/** What `prepare` decided: refused with these errors (not yet formatted), or ready. */
export type Prepared = { readonly kind: 'refused'; readonly errors: readonly GraphQLError[] } | Ready;

/** What `start` began: a live subscription, or the one formatted result to send. */
export type Started = { readonly live: LiveSubscription } | { readonly result: FormattedExecutionResult };

export type LiveTransport = 'ws' | 'sse';

export interface LiveOperationsDeps {
  readonly config: Config;
  /** Checks bearer tokens, as the HTTP transport does. */
  readonly tokens: TokenVerifier;
  readonly logger: Logger;
  readonly services: Services;
  readonly protection: Protection;
  readonly schema: GraphQLSchema;
  readonly executor: SubscriptionExecutor;
  readonly observe?: OperationObserver;
}

/** Parsed documents shared by every live transport; a bound in (estimated) bytes, not entries. */
const DOCUMENT_CACHE_BYTES = 16 * 1024 * 1024;

/**
 * What every live transport does the same way (graphql-ws and graphql-sse): the bearer
 * token, the HTTP transport's parser (token limit), validation rules (depth, aliases,
 * directives, no introspection in production) and cost check, the per-connection
 * operation limit, and then the SubscriptionExecutor for subscriptions (one execution and
 * one serialised payload per group) or a plain execution for queries and mutations.
 * The transports only differ in how they frame what `OperationSink` receives.
 */
export class LiveOperations {
  /** Many subscribers send the same few documents: parse and validate each once, share the AST. */
  private readonly documents = new DocumentCache(DOCUMENT_CACHE_BYTES);
  private readonly rules: ValidationRule[];
  /** Subscriptions per user on this instance, WebSocket and SSE together. */
  private readonly perUser: ConnectionsPerUser;
  private readonly format: Parameters<typeof formatResult>[2];

  constructor(private readonly deps: LiveOperationsDeps) {
    this.rules = [...specifiedRules, ...deps.protection.validationRules, ...(deps.config.isProduction ? [NoSchemaIntrospectionCustomRule] : [])];
    this.format = { logger: deps.logger, formatError: deps.protection.formatError };
    this.perUser = new ConnectionsPerUser(deps.config.live.maxOperationsPerUser);
  }

  /** Estimated bytes held by the parsed-document cache. */
  get documentCacheBytes(): number {
    return this.documents.bytes;
  }

  /** An `Authorization`-style value ("Bearer <jwt>") checked as the HTTP transport checks it. */
  async admit(authorization: unknown): Promise<Admission> {
    if (typeof authorization === 'string' && Buffer.byteLength(authorization) > MAX_TOKEN_BYTES) {
      return { kind: 'token-too-large', reason: `Token larger than ${MAX_TOKEN_BYTES} bytes` };
    }
    try {
      const { caller, expiresAt } = await authenticate(typeof authorization === 'string' ? authorization : null, this.deps.tokens);
      return { kind: 'accepted', caller, expiresAt: expiresAt.getTime() };
    } catch (e) {
      if (isDomainError(e) && e.code === 'SERVICE_UNAVAILABLE') return { kind: 'unavailable', reason: 'Identity provider unavailable: try again' };
      if (isDomainError(e)) return { kind: 'forbidden', reason: 'Forbidden' };
      throw e;
    }
  }

  /**
   * Checks one operation for `caller` and readies it to run: `running` counts the operations
   * its connection runs now, this one included; `readOnly` refuses mutations (a GET). A
   * refusal is observed here; a ready operation is observed by `start`.
   */
  prepare(request: OperationRequest, caller: Caller, running: number, transport: LiveTransport, readOnly = false): Prepared {
    const { config, protection, schema, services } = this.deps;
    const limit = config.live.wsMaxSubscriptionsPerConnection;
    const operationName = request.operationName ?? null;
    const startedAt = performance.now();
    const observe = (kind: OperationTypeNode | null, named: string | null) => (outcome: string) =>
      this.deps.observe?.({ kind, operationName: named, transport, outcome, startedAt, endedAt: performance.now() });
    const refuse = (errors: GraphQLError[], kind: OperationTypeNode | null = null, named = operationName): Prepared => {
      const code = errors[0]?.extensions.code;
      observe(kind, named)(typeof code === 'string' ? code : 'INTERNAL_SERVER_ERROR');
      return { kind: 'refused', errors };
    };
    if (running > limit) {
      return refuse([
        new GraphQLError(`At most ${limit} operations may run at once on one connection; complete one first`, {
          extensions: { code: 'TOO_MANY_SUBSCRIPTIONS', limit },
        }),
      ]);
    }
    let document = this.documents.get(request.query);
    if (!document) {
      const checked = this.parseAndValidate(request.query);
      if (Array.isArray(checked)) return refuse(checked);
      document = checked;
      this.documents.set(request.query, document);
    }
    const variables = request.variables ?? null;
    const tooCostly = protection.checkCost(document, operationName, variables);
    if (tooCostly) return refuse([tooCostly]);
    const ast = getOperationAST(document, operationName);
    const kind = ast?.operation ?? null;
    const named = ast?.name?.value ?? operationName;
    if (!kind) return refuse([new GraphQLError('Unable to identify operation', { extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } })]);
    // GraphQL over HTTP: a GET must not change anything.
    if (readOnly && kind === OperationTypeNode.MUTATION) return refuse([new GraphQLError('Mutations cannot be sent over GET', { extensions: { code: 'BAD_REQUEST' } })], kind, named);
    // Last: a slot (LIVE_MAX_OPERATIONS_PER_USER) is only taken by an operation that will start, which gives it back.
    if (kind === OperationTypeNode.SUBSCRIPTION && !this.perUser.tryOpen(userKeyOf(caller))) {
      const max = config.live.maxOperationsPerUser;
      return refuse(
        [new GraphQLError(`At most ${max} subscriptions may run at once per user; complete one first`, { extensions: { code: 'TOO_MANY_SUBSCRIPTIONS', limit: max, scope: 'user' } })],
        kind,
        named,
      );
    }
    const context: GraphQLContext = {
      caller,
      services,
      // Each loader is made on first use: a subscription's own context asks for none (each event gets fresh ones).
      loaders: new Loaders(caller, services),
      requestId: randomUUID(),
      budget: protection.responseBudget(),
    };
    const args: ExecutionArgs = { schema, document, operationName, variableValues: variables, contextValue: context };
    return { kind: 'ready', operation: kind, args, context, done: observe(kind, named) };
  }

  /**
   * Runs a ready operation: a subscription through the SubscriptionExecutor (its results go
   * to `sink`), a query or mutation once. A result to send once comes back formatted.
   */
  async start(ready: Ready, sink: SubscriberSink): Promise<Started> {
    let result: FormattedExecutionResult;
    if (ready.operation === OperationTypeNode.SUBSCRIPTION) {
      const held = new SlotHoldingSubscription(this.perUser, ready.context.caller, sink);
      let subscribed: Awaited<ReturnType<SubscriptionExecutor['subscribe']>>;
      try {
        subscribed = await this.deps.executor.subscribe(ready.args, held);
      } catch (e) {
        held.release();
        throw e;
      }
      if ('live' in subscribed) {
        ready.done('ok');
        held.live = subscribed.live;
        return { live: held };
      }
      held.release();
      result = formatResult(subscribed.result, ready.context, this.format);
    } else {
      result = formatResult(await execute(ready.args), ready.context, this.format);
    }
    ready.done(outcomeOf(result));
    return { result };
  }

  /** Refusal errors as clients see them (coded, masked, without suggestions in production). */
  formatErrors(errors: readonly GraphQLError[]): GraphQLFormattedError[] {
    return errors.map((error) => this.deps.protection.formatError(error.toJSON(), error));
  }

  /** Runs one operation to its end through `sink` (see `prepare` and `start`). */
  async run(sink: OperationSink, request: OperationRequest, caller: Caller, running: number, transport: LiveTransport, readOnly = false): Promise<void> {
    const prepared = this.prepare(request, caller, running, transport, readOnly);
    if (prepared.kind === 'refused') return sink.error(this.formatErrors(prepared.errors));
    const started = await this.start(prepared, sink);
    if ('live' in started) return sink.attach(started.live);
    sink.result(started.result);
    sink.complete();
  }

  private parseOnly(query: string): DocumentNode | GraphQLError {
    try {
      return this.deps.protection.parse(query);
    } catch (e) {
      if (!(e instanceof GraphQLError)) throw e;
      return new GraphQLError(e.message, { nodes: e.nodes, source: e.source, positions: e.positions, extensions: { code: 'GRAPHQL_PARSE_FAILED' } });
    }
  }

  private parseAndValidate(query: string): DocumentNode | GraphQLError[] {
    const document = this.parseOnly(query);
    if (document instanceof GraphQLError) return [document];
    const errors = validate(this.deps.schema, document, this.rules);
    // Coded as Apollo codes them over HTTP, whatever code a rule chose; the cause kept, as Apollo keeps it (an id the ID scalar refused is BAD_USER_INPUT).
    if (errors.length > 0) {
      return errors.map(
        (e) => new GraphQLError(e.message, { nodes: e.nodes, source: e.source, positions: e.positions, originalError: e, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }),
      );
    }
    return document;
  }
}

/**
 * A subscription holds its user's slot (taken by `prepare`) until it ends: completed by the
 * server, or cancelled by the client (or its going away). One object stands between the
 * executor and the transport's sink and is the transport's handle: thousands of
 * subscribers each keep it for their whole life, so it is a class, not closures.
 */
class SlotHoldingSubscription implements SubscriberSink, LiveSubscription {
  /** What the executor started; set once subscribed. */
  live: LiveSubscription | null = null;
  private held = true;

  constructor(
    private readonly slots: ConnectionsPerUser,
    private readonly caller: Caller,
    private readonly sink: SubscriberSink,
  ) {}

  next(payload: Buffer, flushed?: () => void): void {
    this.sink.next(payload, flushed);
  }

  get congested(): boolean {
    return this.sink.congested;
  }

  complete(): void {
    this.release();
    this.sink.complete();
  }

  cancel(): void {
    this.release();
    this.live?.cancel();
  }

  /** Gives the slot back; idempotent. */
  release(): void {
    if (!this.held) return;
    this.held = false;
    this.slots.close(userKeyOf(this.caller));
  }
}

/** "ok", or the first error's code: a bounded label. */
export function outcomeOf(result: FormattedExecutionResult): string {
  const first = result.errors?.[0];
  if (!first) return 'ok';
  const code = first.extensions?.code;
  return typeof code === 'string' ? code : 'INTERNAL_SERVER_ERROR';
}
