/** AGN-033 6.3: a file the turn produced, referenced, never embedded. */
export interface FileRef {
  readonly name: string;
  readonly mimeType: string;
  readonly url: string;
  readonly sizeBytes: number;
  readonly contentHash: string;
  readonly description?: string;
  readonly contentExpires?: Date;
}

const MIME_TYPES: Readonly<Record<string, string>> = {
  md: 'text/markdown',
  json: 'application/json',
  ts: 'text/x-typescript',
  tsx: 'text/x-typescript',
  js: 'text/javascript',
  mjs: 'text/javascript',
  css: 'text/css',
  html: 'text/html',
  py: 'text/x-python',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  csv: 'text/csv',
  xml: 'application/xml',
  sql: 'application/sql',
};

/** The media type a written file declares, by its extension; text/plain when unknown. */
export function mimeTypeOfPath(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
  return `${MIME_TYPES[ext] ?? 'text/plain'}; charset=utf-8`;
}
