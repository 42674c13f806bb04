import { createHash, randomUUID } from 'node:crypto';
import {
  createSourceEventStream,
  execute,
  GraphQLError,
  getOperationAST,
  Kind,
  print,
  visit,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type FormattedExecutionResult,
} from 'graphql';
import { isAdmin, type Caller } from '../../domain/caller';
import type { DomainError } from '../../domain/errors';
import type { Logger } from '../../logger';
import type { GraphQLContext } from '../context';
import { isExpectedError } from '../error-mapping';
import type { Loaders } from '../loaders';
import type { ErrorFormatter } from '../protection';
import type { EventShares } from './event-shares';
import { LiveGroup, type LiveSubscription, type SubscriberSink } from './live-group';
import { LiveSource } from './live-source';
import { sameForEveryReader } from './viewer-independence';

export interface SubscriptionExecutorOptions {
  readonly logger: Logger;
  /** Share one execution per event between subscribers of the same operation and visibility. */
  readonly shared: boolean;
  /** How errors reach clients (coded, masked, without suggestions in production). */
  readonly formatError: ErrorFormatter;
  /** Each live event's facts and per-caller loaders, shared by all groups (and the status router) it reaches while any has still to process it. */
  readonly shares: EventShares;
}

/** What a subscribe call started: a live subscription, or a result to send once (errors found when subscribing). */
export type Subscribed = { readonly live: LiveSubscription } | { readonly result: ExecutionResult };

/**
 * Runs subscription operations for the live transports (WebSocket, SSE). Each subscriber's subscribe call
 * builds its source (access checked for that subscriber), and subscribers whose results
 * must be identical (same document, variables, and visibility; or any viewer, when the
 * selection is the same for every reader of the event's session and each subscriber is
 * admitted per event: viewer-independence.ts) join one LiveGroup, which
 * executes each event once with loaders made for that event, formats and serialises the
 * result once, and hands the same bytes to every subscriber's sink, whatever its transport;
 * the transport only frames them (an operation id spliced in, an SSE event around them).
 */
export class SubscriptionExecutor {
  private readonly groups = new Map<string, LiveGroup<unknown>>();
  /** Selection-set executions so far (one per event per group); shows the sharing at work. */
  executions = 0;
  /** Results serialised so far (one per event per group, whatever its size). */
  serialisations = 0;

  constructor(private readonly options: SubscriptionExecutorOptions) {}

  /** Live groups right now (each an opened source). */
  get groupCount(): number {
    return this.groups.size;
  }

  /** Subscribers right now, over all groups. */
  get subscriberCount(): number {
    let n = 0;
    for (const group of this.groups.values()) n += group.size;
    return n;
  }

  readonly subscribe = async (args: ExecutionArgs, sink: SubscriberSink): Promise<Subscribed> => {
    const context = args.contextValue as GraphQLContext;
    const stream = await createSourceEventStream(args);
    // Errors found when subscribing (NOT_FOUND, FORBIDDEN, bad afterEventId) come back as a result.
    if (!(stream instanceof LiveSource)) {
      if (Symbol.asyncIterator in stream) throw new Error('subscription fields must return a LiveSource');
      return { result: stream };
    }
    const source = stream as LiveSource<unknown>;
    // Viewers share a group when what they select is the same for every reader and the source can admit each one per event.
    const anyViewer =
      this.options.shared && typeof source.admitViewers === 'function' && sameForEveryReader(args.schema, args.document, args.operationName ?? null);
    const viewers = anyViewer ? `${context.caller.orgId}\nany reader` : visibilityOf(context.caller);
    const key = this.options.shared ? `${viewers}\n${operationKey(args)}` : randomUUID();
    let group = this.groups.get(key);
    if (!group || group.isClosed) {
      const requestId = `live-${randomUUID()}`;
      const operation: SharedOperation = {
        schema: args.schema,
        document: args.document,
        operationName: args.operationName ?? null,
        variableValues: args.variableValues ?? null,
        services: context.services,
        budget: context.budget,
        requestId,
      };
      const created: LiveGroup<unknown> = new LiveGroup(source, (event, caller, loaders) => this.execute(operation, event, caller, loaders), {
        failure: (error) => this.serialise(failureResult(error)),
        onError: (err) => this.options.logger.error({ err, requestId }, 'live subscription stopped by an unexpected error'),
        onClosed: () => {
          if (this.groups.get(key) === created) this.groups.delete(key);
        },
        anyViewer,
        shares: this.options.shares,
      });
      this.groups.set(key, created);
      group = created;
    }
    return { live: group.join(source, sink) };
  };

  private async execute(operation: SharedOperation, event: unknown, caller: Caller, loaders: Loaders): Promise<Buffer> {
    this.executions++;
    const { services, budget, requestId } = operation;
    const context: GraphQLContext = { caller, services, loaders, requestId, budget: budget.fresh() };
    const result = await execute({
      schema: operation.schema,
      document: operation.document,
      operationName: operation.operationName,
      variableValues: operation.variableValues,
      rootValue: event,
      contextValue: context,
    });
    return this.serialise(formatResult(result, context, this.options));
  }

  /** The one JSON text of a result that every subscriber's frame carries. */
  private serialise(result: FormattedExecutionResult): Buffer {
    this.serialisations++;
    return Buffer.from(JSON.stringify(result));
  }
}

/** What a group needs to execute its events: the operation, not the first subscriber's whole context. */
interface SharedOperation {
  readonly schema: ExecutionArgs['schema'];
  readonly document: DocumentNode;
  readonly operationName: string | null;
  readonly variableValues: ExecutionArgs['variableValues'] | null;
  readonly services: GraphQLContext['services'];
  readonly budget: GraphQLContext['budget'];
  readonly requestId: string;
}

/**
 * Masks and codes errors as the HTTP transport does; unexpected ones are logged once here.
 * A result over its response budget becomes the budget's one error. Results that are
 * already formatted pass unchanged.
 */
export function formatResult(
  result: ExecutionResult | FormattedExecutionResult,
  context: Pick<GraphQLContext, 'budget' | 'requestId'>,
  { logger, formatError }: Pick<SubscriptionExecutorOptions, 'logger' | 'formatError'>,
): FormattedExecutionResult {
  if (context.budget.exceeded) return context.budget.result();
  if (!result.errors?.some((e) => e instanceof GraphQLError)) return result;
  const { requestId } = context;
  return {
    ...result,
    errors: result.errors.map((error) => {
      if (!(error instanceof GraphQLError)) return error;
      if (!isExpectedError(error)) {
        logger.error({ err: error.originalError ?? error, requestId, path: error.path }, 'unexpected error while executing a GraphQL operation');
      }
      return formatError(error.toJSON(), error);
    }),
  };
}

const failureResult = (error: DomainError): FormattedExecutionResult => ({
  data: null,
  errors: [{ message: error.message, extensions: { code: error.code, ...error.details } }],
});

/**
 * Callers whose results are always the same: the org's admins see all of the org; anyone
 * else sees what they own, take part in, or is public, so they only share with themselves.
 */
export function visibilityOf(caller: Caller): string {
  return isAdmin(caller) ? `${caller.orgId}\nadmin` : `${caller.orgId}\nuser\n${caller.userId}`;
}

/**
 * Identifies the operation: normalised document, operation name and variables. A variable
 * used only as the root field's `afterEventId` is left out: it decides where a subscriber's
 * replay starts (its own catch-up), not what the shared live results look like.
 */
export function operationKey(args: ExecutionArgs): string {
  const variables: Record<string, unknown> = { ...(args.variableValues ?? {}) };
  const resume = resumeVariable(args.document, args.operationName ?? null);
  if (resume) delete variables[resume];
  return createHash('sha256')
    .update(print(args.document))
    .update('\0')
    .update(args.operationName ?? '')
    .update('\0')
    .update(stableJson(variables))
    .digest('base64url');
}

function resumeVariable(document: DocumentNode, operationName: string | null): string | null {
  const operation = getOperationAST(document, operationName);
  const [root, ...others] = operation?.selectionSet.selections ?? [];
  if (!root || others.length > 0 || root.kind !== Kind.FIELD) return null;
  const value = root.arguments?.find((a) => a.name.value === 'afterEventId')?.value;
  if (value?.kind !== Kind.VARIABLE) return null;
  const name = value.name.value;
  let uses = 0;
  visit(document, {
    VariableDefinition: () => false,
    Variable(node) {
      if (node.name.value === name) uses++;
    },
  });
  return uses === 1 ? name : null;
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
