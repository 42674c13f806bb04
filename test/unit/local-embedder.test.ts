import { definedNames, LOCAL_EMBEDDER_DIMENSION, LocalHashEmbedder, splitIdentifier } from '../../src/retrieval/local-embedder.adapter';

const embedder = new LocalHashEmbedder();

/** A definition among chunks that call it, chunks with similar names, and unrelated code. */
const CORPUS: Record<string, string> = {
  'src/billing/invoice.ts': `import { round } from '../math';
export function parseInvoiceTotal(raw: string): number {
  const cleaned = raw.replace(/[^0-9.]/g, '');
  return round(Number(cleaned), 2);
}`,
  'src/billing/report.ts': `import { parseInvoiceTotal } from './invoice';
export function monthlyReport(rows: string[]) {
  const totals = rows.map((r) => parseInvoiceTotal(r));
  const sum = totals.reduce((a, b) => a + b, 0);
  return { sum, average: sum / rows.length, max: Math.max(...totals), first: parseInvoiceTotal(rows[0]) };
}`,
  'src/billing/export.ts': `import { parseInvoiceTotal } from './invoice';
export const toCsv = (rows: string[]) => rows.map((r) => \`\${r};\${parseInvoiceTotal(r)}\`).join('\\n');`,
  'src/billing/tax.ts': `export function parseInvoiceTax(raw: string): number {
  return Number(raw) * 0.2;
}
export class InvoiceTotals { constructor(readonly net: number, readonly gross: number) {} }`,
  'src/users/session.ts': `export class SessionStore {
  private readonly sessions = new Map<string, Date>();
  touch(id: string) { this.sessions.set(id, new Date()); }
}`,
  'server/handlers.go': `package server
func (s *Server) HandleLogin(w http.ResponseWriter, r *http.Request) {
  token := s.issueToken(r.FormValue("user"))
  w.Write([]byte(token))
}`,
  'tools/migrate.py': `def apply_migrations(conn, folder):
    for name in sorted(os.listdir(folder)):
        conn.execute(open(os.path.join(folder, name)).read())`,
};

/** The corpus's paths by exact cosine to the query, best first (the vectors are unit length). */
async function rank(query: string): Promise<string[]> {
  const paths = Object.keys(CORPUS);
  const docs = await embedder.embed(Object.entries(CORPUS).map(([path, text]) => `${path}\n${text}`), 'document');
  const [q] = await embedder.embed([query], 'query');
  const score = (v: Float32Array) => v.reduce((s, x, j) => s + x * q![j]!, 0);
  return paths
    .map((path, i) => ({ path, score: score(docs[i]!) }))
    .sort((a, b) => b.score - a.score)
    .slice(0, 3)
    .map((h) => h.path);
}

describe('local hashing embedder', () => {
  it('gives unit-length vectors of its dimension, the same for the same text', async () => {
    const [a, b, c] = await embedder.embed(['parseInvoiceTotal(raw)', 'parseInvoiceTotal(raw)', 'SessionStore'], 'document');
    expect(a).toHaveLength(LOCAL_EMBEDDER_DIMENSION);
    expect(Math.hypot(...a!)).toBeCloseTo(1, 5);
    expect(Array.from(a!)).toEqual(Array.from(b!));
    expect(Array.from(a!)).not.toEqual(Array.from(c!));
    expect(Array.from((await embedder.embed([''], 'query'))[0]!).every((x) => x === 0)).toBe(true);
  });

  it.each([
    ['parseInvoiceTotal', 'src/billing/invoice.ts'],
    ['where is parseInvoiceTotal defined?', 'src/billing/invoice.ts'],
    ['parse_invoice_total', 'src/billing/invoice.ts'],
    ['SessionStore', 'src/users/session.ts'],
    ['HandleLogin', 'server/handlers.go'],
    ['apply_migrations', 'tools/migrate.py'],
    ['InvoiceTotals class', 'src/billing/tax.ts'],
  ])('ranks the chunk that defines the identifier in "%s" first', async (query, expected) => {
    expect((await rank(query))[0]).toBe(expected);
  });

  it('finds code by the words of its identifiers', async () => {
    expect((await rank('monthly report average'))[0]).toBe('src/billing/report.ts');
  });
});

describe('identifier features', () => {
  it('splits camelCase, PascalCase acronyms, snake_case and digits', () => {
    expect(splitIdentifier('parseHTTPRequest2_body')).toEqual(['parse', 'http', 'request', '2', 'body']);
    expect(splitIdentifier('MAX_PAGE_SIZE')).toEqual(['max', 'page', 'size']);
    expect(splitIdentifier('simple')).toEqual(['simple']);
  });

  it('recognises definitions across languages, not calls or control flow', () => {
    const code = `export function parseInvoice() {}
class InvoiceStore {
  public async loadAll(filter: Filter): Promise<void> {
    if (ready) {
      return helper(filter);
    }
  }
}
def apply_migrations(conn):
func (s *Server) HandleLogin(w http.ResponseWriter) {
CREATE TABLE invoices (id int);
const limit = helper(3);`;
    expect([...definedNames(code)].sort()).toEqual(
      ['applymigrations', 'handlelogin', 'invoices', 'invoicestore', 'limit', 'loadall', 'parseinvoice'].sort(),
    );
  });
});
