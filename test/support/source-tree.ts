import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Embedder, EmbeddingKind } from '../../src/retrieval/embedder.port';

/** A working tree in a temporary directory, written from a path -> content map. */
export function writeTree(files: Readonly<Record<string, string | Buffer>>, root = mkdtempSync(join(tmpdir(), 'gw-tree-'))): string {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

export const removeTree = (root: string): void => rmSync(root, { recursive: true, force: true });

/** Wraps an embedder and remembers every document text it was asked to embed. */
export class RecordingEmbedder implements Embedder {
  readonly documents: string[] = [];
  readonly queries: string[] = [];
  constructor(private readonly inner: Embedder) {}
  get id(): string {
    return this.inner.id;
  }
  get dimension(): number {
    return this.inner.dimension;
  }
  embed(texts: readonly string[], kind: EmbeddingKind): Promise<Float32Array[]> {
    (kind === 'document' ? this.documents : this.queries).push(...texts);
    return this.inner.embed(texts, kind);
  }
}

/** A codebase with a definition, its callers and look-alikes, in several languages. */
export const SAMPLE_CODE: Readonly<Record<string, string>> = {
  'src/billing/invoice.ts': `import { round } from '../math';

/** Parses a money amount as printed on an invoice. */
export function parseInvoiceTotal(raw: string): number {
  const cleaned = raw.replace(/[^0-9.]/g, '');
  return round(Number(cleaned), 2);
}
`,
  'src/billing/report.ts': `import { parseInvoiceTotal } from './invoice';

export function monthlyReport(rows: string[]) {
  const totals = rows.map((r) => parseInvoiceTotal(r));
  const sum = totals.reduce((a, b) => a + b, 0);
  return { sum, average: sum / rows.length, first: parseInvoiceTotal(rows[0]) };
}
`,
  'src/ui/primitives/button.tsx': `export function PrimaryButton(props: { label: string; onClick(): void }) {
  return <button className="primary" onClick={props.onClick}>{props.label}</button>;
}
`,
  'src/ui/theme.css': `.primary { color: white; background: rebeccapurple; }
`,
  'docs/guide.md': `# Billing guide

Invoices are parsed by parseInvoiceTotal and summed into a monthly report.
`,
};
