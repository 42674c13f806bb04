import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { LOCAL_EMBEDDER_DIMENSION as DIM } from '../../src/retrieval/local-embedder.adapter';
import type { RetrievalRequest } from '../../src/retrieval/retrieval.port';
import { FakeQdrant } from '../support/fake-qdrant';
import { removeTree, SAMPLE_CODE, writeTree } from '../support/source-tree';
import { startGateway, type TestGateway } from '../support/testkit';

const root = resolve(__dirname, '../..');
const run = promisify(execFile);

/** `npm run ingest -- ...` as built: node dist/cli/ingest.js. */
async function ingest(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['dist/cli/ingest.js', ...args], {
      cwd: root,
      env: { ...process.env, OPENAI_API_KEY: '', QDRANT_URL: '', ...env },
    });
    return { code: 0, stdout: stdout.trim(), stderr };
  } catch (e) {
    const failed = e as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout.trim(), stderr: failed.stderr };
  }
}

/**
 * The same on a terminal: under a pseudo-terminal from util-linux's `script`, which gives the
 * CLI a TTY for stdin, stdout and stderr and records everything the terminal was sent.
 */
async function ingestOnTerminal(args: string[], env: Record<string, string>, redirectStdoutTo?: string): Promise<{ code: number; screen: string }> {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, 'dist/cli/ingest.js', ...args].map(quote).join(' ') + (redirectStdoutTo ? ` > ${quote(redirectStdoutTo)}` : '');
  try {
    const { stdout } = await run('script', ['--quiet', '--return', '--command', command, '/dev/null'], {
      cwd: root,
      env: { ...process.env, OPENAI_API_KEY: '', QDRANT_URL: '', ...env },
    });
    return { code: 0, screen: stdout };
  } catch (e) {
    const failed = e as { code: number; stdout: string };
    return { code: failed.code, screen: failed.stdout };
  }
}

const request: RetrievalRequest = {
  orgId: 'acme',
  collection: 'code',
  query: 'where is parseInvoiceTotal defined?',
  repo: 'acme/api',
  language: null,
  pathPrefix: null,
  limit: 5,
};

describe('npm run ingest', () => {
  let tree: string;
  beforeAll(() => {
    tree = writeTree(SAMPLE_CODE);
  });
  afterAll(() => removeTree(tree));

  it('explains its usage when arguments are missing or unknown', async () => {
    for (const args of [[], ['--path', tree], ['--path', tree, '--repo', 'r', '--collection', 'c', '--bogus']]) {
      const res = await ingest(args, {});
      expect(res.code).toBe(2);
      expect(res.stderr).toContain('usage: npm run ingest -- --path <dir> --repo <name> --collection <name>');
    }
  });

  describe('into the embedded index of a running gateway', () => {
    let t: TestGateway;
    beforeAll(async () => {
      t = await startGateway();
    });
    afterAll(() => t.close());

    it('is seen by the gateway without a restart, and a re-run reports what changed', async () => {
      const env = { DATA_DIR: t.gateway.config.dataDir };
      await expect(t.gateway.retriever.retrieve(request)).rejects.toMatchObject({ kind: 'collection-missing' });

      // Not on a terminal: no progress at all, even outside CI; stdout holds the summary alone.
      const first = await ingest(['--path', tree, '--repo', 'acme/api', '--collection', 'code', '--org', 'acme'], { ...env, CI: '' });
      expect(first.code).toBe(0);
      expect(first.stderr).toBe('');
      expect(first.stdout).toMatch(
        new RegExp(
          `^ingested acme/api into acme__code \\(embedded index in .+, local-hash-v1 \\(dimension ${DIM}\\)\\): 5 files, 5 chunks added, 0 unchanged, 0 removed in \\d+\\.\\d s$`,
        ),
      );
      const [best] = await t.gateway.retriever.retrieve(request);
      expect(best?.ref.path).toBe('src/billing/invoice.ts');

      writeFileSync(join(tree, 'src/billing/invoice.ts'), SAMPLE_CODE['src/billing/invoice.ts']!.replace('parseInvoiceTotal', 'parseInvoiceAmount'));
      const second = await ingest(['--path', tree, '--repo', 'acme/api', '--collection', 'code', '--org', 'acme'], env);
      expect(second.stdout).toMatch(/: 5 files, 1 chunks added, 4 unchanged, 1 removed in /);
      const [renamed] = await t.gateway.retriever.retrieve({ ...request, query: 'parseInvoiceAmount' });
      expect(renamed?.text).toContain('export function parseInvoiceAmount(');
    });

    it('fails clearly on a tree that is not there', async () => {
      const res = await ingest(['--path', join(tree, 'missing'), '--repo', 'r', '--collection', 'code', '--org', 'acme'], { DATA_DIR: t.gateway.config.dataDir });
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/^ingest failed: .*missing is not a directory/);
    });
  });

  describe('on a terminal', () => {
    let dataDir: string;
    const args = () => ['--path', tree, '--repo', 'acme/api', '--collection', 'code', '--org', 'acme'];
    beforeEach(() => {
      dataDir = mkdtempSync(join(tmpdir(), 'gw-ingest-tty-'));
    });
    afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

    it('keeps one progress line up to date on stderr and erases it before the summary', async () => {
      const { code, screen } = await ingestOnTerminal(args(), { DATA_DIR: dataDir, CI: '' });
      expect(code).toBe(0);
      // The first file done is drawn at once; every drawing rewrites the same line in place.
      expect(screen).toMatch(/^\r1\/5 files, 0 chunks embedded · estimating time left\x1b\[K/);
      const [progress, summary] = screen.split('\r\x1b[K') as [string, string];
      expect(progress.split('\r').filter(Boolean).every((drawing) => /^\d\/5 files, \d+ chunks embedded · .+\x1b\[K$/.test(drawing))).toBe(true);
      expect(progress).not.toContain('\n');
      // A terminal turns \n into \r\n.
      expect(summary).toMatch(/^ingested acme\/api into acme__code \(.+\): 5 files, 5 chunks added, 0 unchanged, 0 removed in \d+\.\d s\r\n$/);
    });

    it('stays quiet in CI', async () => {
      const { code, screen } = await ingestOnTerminal(args(), { DATA_DIR: dataDir, CI: 'true' });
      expect(code).toBe(0);
      expect(screen).toMatch(/^ingested acme\/api into acme__code \(.+\): 5 files, 5 chunks added, 0 unchanged, 0 removed in \d+\.\d s\r\n$/);
    });

    it('stays quiet when stdout goes to a file, which then holds the summary alone', async () => {
      const out = join(dataDir, 'summary.txt');
      const { code, screen } = await ingestOnTerminal(args(), { DATA_DIR: dataDir, CI: '' }, out);
      expect(code).toBe(0);
      expect(screen).toBe('');
      expect(readFileSync(out, 'utf8')).toMatch(/^ingested acme\/api into acme__code \(.+\): 5 files, 5 chunks added, 0 unchanged, 0 removed in \d+\.\d s\n$/);
    });
  });

  describe('with QDRANT_URL set', () => {
    const fake = new FakeQdrant();
    let t: TestGateway;
    let url: string;
    beforeAll(async () => {
      url = await fake.start();
      t = await startGateway({ env: { QDRANT_URL: url } });
    });
    afterAll(async () => {
      await t.close();
      await fake.stop();
    });

    it('indexes into Qdrant, where the gateway retrieves from', async () => {
      const res = await ingest(['--path', tree, '--repo', 'acme/api', '--collection', 'code', '--org', 'acme', '--language', 'typescript'], { QDRANT_URL: url });
      expect(res.code).toBe(0);
      expect(res.stdout).toContain(`(qdrant at ${new URL(url).host}, local-hash-v1 (dimension ${DIM})): 5 files`);
      expect(fake.collections.get('acme__code')?.points.size).toBe(5);
      const hits = await t.gateway.retriever.retrieve({ ...request, query: 'parseInvoiceAmount', language: 'typescript' });
      expect(hits[0]?.ref.path).toBe('src/billing/invoice.ts');
      expect(fake.requestsTo('POST', /points\/query$/)).toHaveLength(1);
    });
  });
});
