import { performance } from 'node:perf_hooks';
import type { ToolDefinition } from '../../domain/contexts';
import { isDomainError } from '../../domain/errors';
import type { FileRef } from '../../domain/file-ref';
import type { ToolCall, ToolResult } from '../../domain/turn';
import type { Logger } from '../../logger.port';
import type { ServerTool, ServerToolContext } from './server-tool';

/** One server tool call, run: the result the model and the final response get, and a file it wrote. */
export interface ServerToolRun {
  readonly result: ToolResult;
  readonly file: FileRef | null;
}

/**
 * The gateway's built-in tools. A conversation that declares a client tool of the same name
 * keeps its own: the server tool is then not offered.
 */
export class ServerToolbox {
  private readonly byName: ReadonlyMap<string, ServerTool>;

  constructor(
    tools: readonly ServerTool[],
    private readonly logger: Logger,
  ) {
    this.byName = new Map(tools.map((t) => [t.definition.name, t]));
  }

  /** The server tools to offer beside these client tools. */
  offeredBeside(clientTools: readonly ToolDefinition[]): ToolDefinition[] {
    const taken = new Set(clientTools.map((t) => t.name));
    return [...this.byName.values()].map((t) => t.definition).filter((d) => !taken.has(d.name));
  }

  /**
   * Runs one call and measures it. Never throws: whatever goes wrong becomes an error result
   * the model reads (bad arguments, a store that is down), so the turn goes on.
   */
  async run(call: ToolCall, context: ServerToolContext): Promise<ServerToolRun> {
    const tool = this.byName.get(call.name);
    const started = performance.now();
    const measured = (outcome: ToolResult['outcome'], file: FileRef | null = null): ServerToolRun => ({
      result: { toolCallId: call.toolCallId, executionMs: Math.round(performance.now() - started), outcome },
      file,
    });
    if (!tool) return measured({ kind: 'error', errorMessage: `${call.name} is not a server tool` });
    try {
      const output = await tool.run(call.argumentsJson, context);
      return measured(output.outcome, output.file ?? null);
    } catch (e) {
      if (isDomainError(e)) return measured({ kind: 'error', errorMessage: `${call.name} failed: ${e.message}` });
      this.logger.warn({ err: e, tool: call.name, turnId: context.turnId }, 'a server tool failed');
      return measured({ kind: 'error', errorMessage: `${call.name} failed inside the gateway` });
    }
  }
}
