import { createHash } from 'node:crypto';
import { contentTypeOf, type BlobStore } from '../../blobs/blob-store.port';
import { turnFileBlobKey, turnFileBlobUrl } from '../../domain/blob-keys';
import { mimeTypeOfPath, type FileRef } from '../../domain/file-ref';
import { MAX_WRITE_FILE_BYTES, parseWriteFileArgs } from '../../domain/server-tool-args';
import { toolError, toolResult, type ServerTool, type ServerToolContext, type ServerToolOutput } from './server-tool';

/**
 * write_file {path, content}: stores the content as a blob of the turn and hands back a
 * FileRef (AGN-033 6.3) whose URL only readers of the session can fetch. Content-addressed,
 * so writing the same content twice stores it once.
 */
export class WriteFileTool implements ServerTool {
  readonly definition = {
    name: 'write_file',
    description:
      `Produces a file for the user (it is attached to your answer; the workspace itself is not changed). ` +
      `path is relative to the workspace; content is the whole file, UTF-8, at most ${MAX_WRITE_FILE_BYTES} bytes.`,
    parametersJson: JSON.stringify({
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Workspace-relative path, e.g. docs/notes.md' },
        content: { type: 'string', description: 'The whole content of the file' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    }),
  };

  constructor(private readonly blobs: BlobStore) {}

  async run(argumentsJson: string, context: ServerToolContext): Promise<ServerToolOutput> {
    const args = parseWriteFileArgs(argumentsJson);
    if (!args.ok) return toolError(`write_file: ${args.error}`);
    const body = Buffer.from(args.value.content, 'utf8');
    const contentHash = createHash('sha256').update(body).digest('hex');
    const key = turnFileBlobKey(context.caller.orgId, context.sessionId, context.turnId, contentHash);
    await this.blobs.put(key, body, contentTypeOf(key));
    const file: FileRef = {
      name: args.value.path,
      mimeType: mimeTypeOfPath(args.value.path),
      url: turnFileBlobUrl(context.sessionId, context.turnId, contentHash),
      sizeBytes: body.length,
      contentHash,
    };
    return toolResult({ written: file.name, sizeBytes: file.sizeBytes, contentHash }, file);
  }
}
