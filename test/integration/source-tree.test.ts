import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { listSourceFiles, MAX_IGNORE_FILE_BYTES } from '../../src/retrieval/source-tree';
import { removeTree, writeTree } from '../support/source-tree';

describe('.gitignore files the walk reads', () => {
  const roots: string[] = [];
  afterAll(() => roots.forEach(removeTree));
  const tree = (files: Record<string, string>) => {
    const root = writeTree(files);
    roots.push(root);
    return root;
  };

  it('reads only regular files: a link to /dev/zero and a FIFO have no rules, and neither exhausts memory nor hangs', async () => {
    const root = tree({ 'a.ts': 'a', 'pipe/b.ts': 'b', 'real/.gitignore': 'ignored.ts\n', 'real/ignored.ts': 'x', 'real/kept.ts': 'k' });
    symlinkSync('/dev/zero', join(root, '.gitignore'));
    execFileSync('mkfifo', [join(root, 'pipe', '.gitignore')]);
    const listing = await listSourceFiles(root, 1024 * 1024);
    expect(listing.files.map((f) => f.path)).toEqual(['a.ts', 'pipe/b.ts', 'real/.gitignore', 'real/kept.ts']);
  });

  it('does not follow a link to a regular file either (as git does not)', async () => {
    const root = tree({ 'rules.txt': 'a.ts\n', 'a.ts': 'a' });
    symlinkSync(join(root, 'rules.txt'), join(root, '.gitignore'));
    expect((await listSourceFiles(root, 1024)).files.map((f) => f.path)).toEqual(['a.ts', 'rules.txt']);
  });

  it('refuses a .gitignore larger than the bound rather than drop what it keeps out', async () => {
    const root = tree({ 'a.ts': 'a' });
    mkdirSync(join(root, 'big'));
    writeFileSync(join(root, 'big', '.gitignore'), `${'#'.repeat(MAX_IGNORE_FILE_BYTES)}\n`);
    await expect(listSourceFiles(root, 1024)).rejects.toThrow(/larger than 1048576 bytes/);
  });
});
