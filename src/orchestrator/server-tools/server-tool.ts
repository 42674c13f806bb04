import type { Caller } from '../../domain/caller';
import type { ToolDefinition } from '../../domain/contexts';
import type { FileRef } from '../../domain/file-ref';
import type { ToolOutcome } from '../../domain/turn';

/** The turn a server tool runs for: its caller decides what the tool may read and where it writes. */
export interface ServerToolContext {
  readonly caller: Caller;
  readonly sessionId: string;
  readonly turnId: string;
}

/** What a server tool produced: the outcome the model reads, and a file when it wrote one. */
export interface ServerToolOutput {
  readonly outcome: ToolOutcome;
  readonly file?: FileRef;
}

/** A built-in tool the gateway runs itself (issue 10), offered next to the conversation's client tools. */
export interface ServerTool {
  readonly definition: ToolDefinition;
  run(argumentsJson: string, context: ServerToolContext): Promise<ServerToolOutput>;
}

export const toolError = (errorMessage: string): ServerToolOutput => ({ outcome: { kind: 'error', errorMessage } });

export const toolResult = (value: unknown, file?: FileRef): ServerToolOutput => ({
  outcome: { kind: 'result', resultJson: JSON.stringify(value) },
  ...(file ? { file } : {}),
});
