import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { seededRandom } from '../src/domain/seeded-random';
import { chunkLines } from '../src/retrieval/chunking';

/** 300-line files of 14-line functions; the chunker decides how many chunks each makes. */
const LINES_PER_FILE = 300;

export const SERVICES = ['billing', 'identity', 'catalog', 'shipping', 'search', 'notifications', 'reporting', 'gateway'];
export const AREAS = ['core', 'api', 'store', 'jobs'];
const LANGUAGES = [
  { ext: 'ts', language: 'typescript' },
  { ext: 'py', language: 'python' },
  { ext: 'go', language: 'go' },
  { ext: 'java', language: 'java' },
];

export interface Definition {
  readonly name: string;
  readonly path: string;
  /** 1-based line of `function name(`. */
  readonly line: number;
}

/** Generates plausible code: functions with made-up names that call each other. */
export class CodeGenerator {
  private readonly next: () => number;
  private readonly words: string[];
  private readonly taken = new Set<string>();
  private readonly names: string[] = [];

  constructor(seed = 42) {
    this.next = seededRandom(seed);
    const consonants = ['b', 'c', 'd', 'f', 'g', 'h', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'w', 'z', 'st', 'tr', 'ch'];
    const vowels = ['a', 'e', 'i', 'o', 'u', 'ai', 'ou'];
    const syllables = consonants.flatMap((c) => vowels.map((v) => c + v));
    this.words = Array.from({ length: 3000 }, () => Array.from({ length: 2 + Math.floor(this.next() * 2) }, () => this.pick(syllables)).join(''));
  }

  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)]!;
  }

  word(): string {
    return this.pick(this.words);
  }

  /** `lines` lines of functions; returns the text and where each function starts. */
  file(path: string, lines: number): { text: string; definitions: Definition[] } {
    const cap = (w: string) => w[0]!.toUpperCase() + w.slice(1);
    const verbs = ['parse', 'load', 'build', 'apply', 'resolve', 'compute', 'render', 'sync', 'validate', 'merge'];
    const out: string[] = [];
    const definitions: Definition[] = [];
    while (out.length < lines) {
      let name: string;
      do name = `${this.pick(verbs)}${cap(this.word())}${cap(this.word())}`;
      while (this.taken.has(name));
      this.taken.add(name);
      if (out.length + 13 <= lines) definitions.push({ name, path, line: out.length + 1 });
      out.push(`export function ${name}(${this.word()}: ${cap(this.word())}): ${cap(this.word())} {`);
      for (let i = 0; i < 10; i++) {
        const callee = this.names.length > 0 && this.next() < 0.3 ? this.pick(this.names) : `${this.word()}.${this.word()}`;
        out.push(`  const ${this.word()} = ${callee}(${this.word()}, '${this.word()} ${this.word()}', ${Math.floor(this.next() * 1000)});`);
      }
      out.push(`  return ${this.word()};`, '}', '');
      this.names.push(name);
    }
    return { text: out.slice(0, lines).join('\n') + '\n', definitions };
  }
}

export const languageOfBenchFile = (path: string): string => LANGUAGES.find((l) => path.endsWith(`.${l.ext}`))!.language;

/** Writes files under `root` until the chunker makes at least `chunks` chunks of them; returns every definition. */
export function generateTree(root: string, chunks: number): { files: number; chunks: number; definitions: Definition[] } {
  const gen = new CodeGenerator();
  const definitions: Definition[] = [];
  let made = 0;
  let f = 0;
  for (; made < chunks; f++) {
    const service = SERVICES[f % SERVICES.length]!;
    const { ext } = LANGUAGES[Math.floor(f / SERVICES.length) % LANGUAGES.length]!;
    const path = `services/${service}/${gen.pick(AREAS)}/${gen.word()}_${f}.${ext}`;
    const { text, definitions: defs } = gen.file(path, LINES_PER_FILE);
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
    definitions.push(...defs);
    made += chunkLines(text).length;
  }
  return { files: f, chunks: made, definitions };
}
