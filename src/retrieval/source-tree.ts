import { constants } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
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

/** Far above any real .gitignore; a larger one stops the listing rather than be read or dropped. */
export const MAX_IGNORE_FILE_BYTES = 1024 * 1024;

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
    const rules = await readIgnoreRules(join(dir, '.gitignore'));
    const here = rules === null ? levels : [...levels, { base: rel, rules: ignore().add(rules) }];
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

/**
 * A directory's .gitignore, read only when it is a regular file (git does not follow a
 * symbolic link to one either) of at most MAX_IGNORE_FILE_BYTES. Anything else has no
 * rules: opened without following links and without blocking, and checked on the open
 * handle, so a FIFO cannot hang the walk nor /dev/zero fill the memory. One that is too
 * large fails the listing: dropping its rules could index what it keeps out (secrets).
 */
async function readIgnoreRules(path: string): Promise<string | null> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // ELOOP: a symbolic link (O_NOFOLLOW).
    if (code === 'ENOENT' || code === 'ELOOP') return null;
    throw e;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return null;
    if (info.size > MAX_IGNORE_FILE_BYTES) throw new Error(`${path} is larger than ${MAX_IGNORE_FILE_BYTES} bytes; not a usable .gitignore`);
    const buffer = Buffer.alloc(info.size);
    const { bytesRead } = await handle.read(buffer, 0, info.size, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
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
