import type { BlobStore } from '../../blobs/blob-store.port';
import type { ContextLookup } from '../../contexts/context-directory.port';
import type { LanguageModel } from '../../llm/llm.port';
import type { Logger } from '../../logger.port';
import type { Retriever } from '../../retrieval/retrieval.port';
import type { TurnStore } from '../../sessions/session-store.port';
import { SearchCodeTool } from './search-code.tool';
import { ServerToolLoop } from './tool-loop';
import { ServerToolbox } from './toolbox';
import { WriteFileTool } from './write-file.tool';

export interface BuiltInToolDeps {
  readonly llm: LanguageModel;
  readonly blobs: BlobStore;
  readonly retriever: Retriever;
  readonly contexts: ContextLookup;
  readonly sessions: Pick<TurnStore, 'getSession' | 'recordChunkRefs'>;
  readonly retrievalLimit: number;
  readonly maxRounds: number;
  readonly logger: Logger;
}

/** The provider loop with the gateway's built-in server tools: write_file and search_code. */
export function builtInToolLoop(deps: BuiltInToolDeps): ServerToolLoop {
  const toolbox = new ServerToolbox(
    [
      new WriteFileTool(deps.blobs),
      new SearchCodeTool({ retriever: deps.retriever, contexts: deps.contexts, sessions: deps.sessions, limit: deps.retrievalLimit }),
    ],
    deps.logger,
  );
  return new ServerToolLoop({ llm: deps.llm, toolbox, maxRounds: deps.maxRounds });
}
