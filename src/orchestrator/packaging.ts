import type { ConversationContextRecord } from '../domain/contexts';
import type { SkippedSnippet } from '../domain/request-metadata';
import type { ActiveFileRef } from '../domain/turn';
import type { LlmInputItem, LlmMessage, LlmRequest } from '../llm/llm.port';
import type { RetrievedChunk } from '../retrieval/retrieval.port';

/** An active file whose content goes to the model on this turn. */
export interface FileToSend {
  readonly ref: ActiveFileRef;
  readonly content: string;
}

export interface UserMessageParts {
  readonly instruction: string;
  readonly mode: string;
  readonly filesToSend: readonly FileToSend[];
  /** Recorded but not sent: unchanged in the live chain, or too large. */
  readonly filesNotSent: readonly ActiveFileRef[];
  readonly snippets: readonly RetrievedChunk[];
  /** Retrieved snippets left out because an active file the model holds is the current version. */
  readonly skippedSnippets?: readonly SkippedSnippet[];
}

/** One earlier exchange of the session, to preload a new provider conversation (spec 001 section 11.3). */
export interface HistoryExchange {
  readonly instruction: string;
  readonly answer: string;
}

/**
 * The user message of one turn: the deltas (changed files, new snippets), then the
 * instruction last. Contents sit in fences longer than any backtick run inside them.
 */
export function userMessage(parts: UserMessageParts): LlmMessage {
  const sections: string[] = [`Mode: ${parts.mode}`];
  if (parts.filesToSend.length > 0 || parts.filesNotSent.length > 0) sections.push(filesSection(parts));
  if (parts.snippets.length > 0) sections.push(snippetsSection(parts.snippets));
  sections.push(`## Instruction\n\n${parts.instruction}`);
  return { type: 'message', role: 'user', text: sections.join('\n\n') };
}

/**
 * One provider call in a conversation context: its system prompt (sent on every call, it
 * does not chain), temperature and client tools around `input`. A new turn and a tool
 * continuation are packaged alike.
 */
export function llmRequestOf(
  conversation: ConversationContextRecord | null,
  call: { readonly model: string; readonly previousResponseId: string | null; readonly input: readonly LlmInputItem[] },
): LlmRequest {
  return {
    model: call.model,
    instructions: conversation?.systemPrompt ?? null,
    temperature: conversation?.temperature ?? null,
    previousResponseId: call.previousResponseId,
    input: call.input,
    tools: conversation?.tools ?? [],
  };
}

function filesSection(parts: UserMessageParts): string {
  const lines = ['## Active files'];
  for (const file of parts.filesToSend) {
    const state = file.ref.isTouched ? 'modified locally' : 'as in the repository';
    lines.push(`### ${file.ref.path} (${file.ref.sizeBytes} bytes, ${state})\n\n${fenced(file.content)}`);
  }
  const unchanged = parts.filesNotSent.filter((f) => !f.wasTooLargeToSend);
  if (unchanged.length > 0) {
    lines.push(`Unchanged since you last saw them in this conversation: ${unchanged.map((f) => f.path).join(', ')}.`);
  }
  const tooLarge = parts.filesNotSent.filter((f) => f.wasTooLargeToSend);
  if (tooLarge.length > 0) {
    lines.push(`Not included because they are larger than 100 KB: ${tooLarge.map((f) => f.path).join(', ')}.`);
  }
  if (parts.filesToSend.length > 0 || unchanged.length > 0) lines.push(localEditsNote(parts));
  return lines.join('\n\n');
}

/** Spec 001 section 4.2: the developer's active files are current; the index may lag behind them. */
function localEditsNote(parts: UserMessageParts): string {
  const note = 'These active files are the current versions (local edits): where retrieved context shows the same path, the active file wins.';
  const skipped = [...new Set((parts.skippedSnippets ?? []).map((s) => s.path))];
  return skipped.length > 0 ? `${note} Indexed snippets of ${skipped.join(', ')} were left out for that reason.` : note;
}

function snippetsSection(snippets: readonly RetrievedChunk[]): string {
  const blocks = snippets.map((s) => `### ${s.ref.path}:${s.ref.startLine}-${s.ref.endLine}\n\n${fenced(s.text, s.language)}`);
  return ['## Retrieved context', ...blocks].join('\n\n');
}

export function fenced(content: string, language: string | null = null): string {
  const longest = Math.max(2, ...(content.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${language ?? ''}\n${content}${content.endsWith('\n') ? '' : '\n'}${fence}`;
}
