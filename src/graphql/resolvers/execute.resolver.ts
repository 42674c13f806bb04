import { GraphQLJSON } from 'graphql-scalars';
import { Arg, Ctx, FieldResolver, Mutation, Resolver, Root } from 'type-graphql';
import { ID } from '../scalars/id.scalar';
import type { ExecuteAccepted, ExecuteResponse } from '../../domain/execute-response';
import type { ToolCall as ToolCallRecord, ToolResult as ToolResultRecord, TurnRecord } from '../../domain/turn';
import type { GraphQLContext } from '../context';
import { ActiveFileInput, AgentExecuteInput } from '../inputs/execute.input';
import { AgentExecuteAccepted, AgentExecuteResponse, ToolResult } from '../types/execute.type';
import { AgentSessionTurn, ToolCall } from '../types/turn.type';

/** The execute mutations: thin, everything goes through the request handler (DD-001). */
@Resolver()
export class ExecuteResolver {
  @Mutation(() => AgentExecuteResponse, { description: "Runs the orchestrator and waits for the turn's outcome." })
  execute(
    @Ctx() { caller, services, requestId }: GraphQLContext,
    @Arg('input', () => AgentExecuteInput) input: AgentExecuteInput,
  ): Promise<ExecuteResponse> {
    return services.execute.execute(caller, input, requestId);
  }

  @Mutation(() => AgentExecuteAccepted, {
    description: 'Creates the PENDING turn and returns at once; the orchestrator runs in the background.',
  })
  executeAsync(
    @Ctx() { caller, services, requestId }: GraphQLContext,
    @Arg('input', () => AgentExecuteInput) input: AgentExecuteInput,
  ): Promise<ExecuteAccepted> {
    return services.execute.executeAsync(caller, input, requestId);
  }

  @Mutation(() => AgentSessionTurn, { description: 'Stops a PENDING turn; it becomes CANCELLED. Idempotent on a CANCELLED turn.' })
  cancelTurn(
    @Ctx() { caller, services }: GraphQLContext,
    @Arg('sessionId', () => ID) sessionId: string,
    @Arg('turnId', () => ID) turnId: string,
  ): Promise<TurnRecord> {
    return services.execute.cancel(caller, sessionId, turnId);
  }

  @Mutation(() => AgentExecuteResponse, {
    description: 'Spec DD-006: a NEW turn with the same (or a new) instruction and fresh retrieval; the old turn is untouched.',
  })
  rerunTurn(
    @Ctx() { caller, services, requestId }: GraphQLContext,
    @Arg('sessionId', () => ID) sessionId: string,
    @Arg('turnId', () => ID) turnId: string,
    @Arg('instruction', () => String, { nullable: true }) instruction: string | null,
    @Arg('activeFiles', () => [ActiveFileInput], { nullable: true, description: "Updated active files; omitted: the old turn's files." })
    activeFiles: ActiveFileInput[] | null,
    @Arg('retrievalPathPrefixes', () => [String], { nullable: true, description: "A new retrieval scope; omitted: the old turn's." })
    retrievalPathPrefixes: string[] | null | undefined,
  ): Promise<ExecuteResponse> {
    return services.execute.rerun(caller, sessionId, turnId, { instruction, activeFiles, retrievalPathPrefixes }, requestId);
  }
}

/** AGN-033 5.2: exactly one of resultJson / errorMessage, from the domain's outcome union. */
@Resolver(() => ToolResult)
export class ToolResultFieldsResolver {
  @FieldResolver(() => String, { nullable: true })
  resultJson(@Root() result: ToolResultRecord): string | null {
    return result.outcome.kind === 'result' ? result.outcome.resultJson : null;
  }

  @FieldResolver(() => String, { nullable: true })
  errorMessage(@Root() result: ToolResultRecord): string | null {
    return result.outcome.kind === 'error' ? result.outcome.errorMessage : null;
  }
}

@Resolver(() => ToolCall)
export class ToolCallFieldsResolver {
  @FieldResolver(() => GraphQLJSON, { nullable: true, description: 'argumentsJson parsed; null when it is not valid JSON.' })
  arguments(@Root() call: ToolCallRecord): unknown {
    try {
      return JSON.parse(call.argumentsJson) as unknown;
    } catch {
      return null;
    }
  }
}
