import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import ignore, { type Ignore } from 'ignore';

export interface SourceFile {
  /** Relative to the tree's root, forward slashes. */
  readonly path: string;
  readonly absolutePath: string;
  readonly sizeBytes: number;
}

export interface SourceListing {
  readonly files: SourceFile[];
  /** Files left out for being larger than the limit, or generated (lock files, minified code). */
  readonly skipped: number;
}

/** Generated files that answer no question about the code and would crowd out what does. */
const GENERATED = new Set(['package-lock.json', 'npm-shrinkwrap.json', 'yarn.lock', 'pnpm-lock.yaml', 'bun.lockb', 'Cargo.lock', 'poetry.lock', 'Pipfile.lock', 'composer.lock', 'Gemfile.lock', 'go.sum']);
const isGenerated = (name: string): boolean => GENERATED.has(name) || /\.min\.(js|css)$|\.map$/.test(name);

interface IgnoreLevel {
  /** Directory of the .gitignore, relative to the root ('' for the root). */
  readonly base: string;
  readonly rules: Ignore;
}

/**
 * Every regular file of a working tree that git would track: .gitignore files are honoured
 * at every level (a deeper file's rules win, `!pattern` re-includes), `.git` is skipped
 * (a directory, or a file in a worktree), symbolic links are not followed (they could
 * leave the tree or loop), generated files are left out. Sorted by path.
 */
export async function listSourceFiles(root: string, maxBytes: number): Promise<SourceListing> {
  const files: SourceFile[] = [];
  let skipped = 0;
  const walk = async (dir: string, rel: string, levels: readonly IgnoreLevel[]): Promise<void> => {
    const gitignore = join(dir, '.gitignore');
    const here = existsSync(gitignore)
      ? [...levels, { base: rel, rules: ignore().add(await readFile(gitignore, 'utf8')) }]
      : levels;
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name === '.git') continue;
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (isIgnored(here, `${path}/`)) continue;
        await walk(join(dir, entry.name), path, here);
      } else if (entry.isFile() && !isIgnored(here, path)) {
        const absolutePath = join(dir, entry.name);
        const { size } = await stat(absolutePath);
        if (size > maxBytes || isGenerated(entry.name)) skipped++;
        else files.push({ path, absolutePath, sizeBytes: size });
      }
    }
  };
  await walk(root, '', []);
  return { files, skipped };
}

function isIgnored(levels: readonly IgnoreLevel[], path: string): boolean {
  let ignored = false;
  for (const level of levels) {
    const rel = level.base ? path.slice(level.base.length + 1) : path;
    const verdict = level.rules.test(rel);
    if (verdict.ignored) ignored = true;
    else if (verdict.unignored) ignored = false;
  }
  return ignored;
}

/** Git's own test: a NUL byte in the first 8,000 bytes means binary. */
export function isBinary(content: Buffer): boolean {
  return content.subarray(0, 8000).includes(0);
}

const LANGUAGES: Readonly<Record<string, string>> = {
  '.ts': 'typescript', '.tsx': 'typescript', '.mts': 'typescript', '.cts': 'typescript',
  '.js': 'javascript', '.jsx': 'javascript', '.mjs': 'javascript', '.cjs': 'javascript',
  '.py': 'python', '.go': 'go', '.rs': 'rust', '.java': 'java', '.kt': 'kotlin', '.kts': 'kotlin',
  '.cs': 'csharp', '.fs': 'fsharp', '.c': 'c', '.h': 'c', '.cpp': 'cpp', '.cc': 'cpp', '.cxx': 'cpp',
  '.hpp': 'cpp', '.hh': 'cpp', '.rb': 'ruby', '.php': 'php', '.swift': 'swift', '.scala': 'scala',
  '.sql': 'sql', '.sh': 'shell', '.bash': 'shell', '.ps1': 'powershell', '.md': 'markdown',
  '.mdx': 'markdown', '.json': 'json', '.yaml': 'yaml', '.yml': 'yaml', '.toml': 'toml', '.xml': 'xml',
  '.html': 'html', '.css': 'css', '.scss': 'css', '.less': 'css', '.graphql': 'graphql', '.gql': 'graphql',
  '.proto': 'protobuf', '.vue': 'vue', '.svelte': 'svelte', '.dart': 'dart', '.lua': 'lua', '.r': 'r',
};

/** Language by file extension; null when unknown. */
export function languageOf(path: string): string | null {
  return LANGUAGES[extname(path).toLowerCase()] ?? null;
}
