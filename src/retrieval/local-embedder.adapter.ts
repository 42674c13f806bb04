import { normalize, type Embedder, type EmbeddingKind } from './embedder.port';
import { fmix32 } from './hashing';

/**
 * A deterministic embedder that needs no model: signed feature hashing of code tokens.
 * Each identifier contributes its whole lower-cased form, its camelCase/snake_case parts
 * (so "invoice total" meets `parseInvoiceTotal`), and character trigrams (so near
 * spellings meet). Definitions (`function foo`, `class Foo`, `def foo`, `foo(...) {`) add
 * a definition feature that a query naming the identifier also carries, which is what
 * ranks the chunk that defines a symbol above the chunks that merely call it.
 *
 * Any change to the features changes the vector space: bump the version in the id, so
 * collections built with the old one are refused instead of searched with garbage.
 */
export const LOCAL_EMBEDDER_ID = 'local-hash-v1';
export const LOCAL_EMBEDDER_DIMENSION = 1024;

const WORD = 0x9e3779b1;
const TRIGRAM = 0x85ebca6b;
const DEFINITION = 0xc2b2ae35;

/**
 * Trigram weight is shared out over a token's trigrams, so long identifiers do not drown a
 * chunk in near-random features. A definition weighs as much as several plain mentions.
 */
const WEIGHT = { word: 1, part: 0.5, queryPart: 0.25, trigrams: 0.3, definition: 4, queryDefinition: 1, stop: 0.1 } as const;

const HEAVY_COPIES = 4;

const TOKEN = /[A-Za-z_$][A-Za-z0-9_$]*|[0-9]+/g;

const DEFINITIONS: readonly RegExp[] = [
  /\b(?:function\*?|class|interface|type|enum|struct|trait|impl|def|fn|func|module|namespace|record|object|protocol|typedef|macro)\s+([A-Za-z_$][\w$]*)/g,
  // Variables only at the top level: locals inside functions would drown the real definitions.
  /^(?:export\s+)?(?:const|let|var|val)\s+([A-Za-z_$][\w$]*)/gm,
  // Go methods: func (r *Repo) Name(
  /\bfunc\s*\([^)\n]*\)\s*([A-Za-z_]\w*)/g,
  // Methods written as `[modifiers and type] name(args) {` (C#, Java, TS class members)
  /^[ \t]*(?:[A-Za-z_][\w<>[\],.?]*\s+)*([A-Za-z_$][\w$]*)\s*(?:<[^>\n]*>)?\s*\([^)\n]*\)\s*(?::[^{;\n]*)?\{/gm,
  /\bcreate\s+(?:or\s+replace\s+)?(?:table|view|function|procedure|type)\s+(?:if\s+not\s+exists\s+)?([A-Za-z_][\w.]*)/gi,
];

/** Words too common in code and questions to tell chunks apart. */
const STOP = new Set(
  (
    'a an and are as at be but by can do does for from how i if in into is it its me my no not of on or so that the ' +
    'their then there these this to was we what when where which who why will with you your defined define ' +
    'definition find show use used uses code file function method class return returns const let var new ' +
    'else while switch case break continue try catch finally throw throws import export default public ' +
    'private protected static void async await null undefined true false self def fn func int string ' +
    'bool boolean number any type interface end elif pass'
  ).split(' '),
);

/** Control keywords that look like `name(args) {` and never define anything. */
const NOT_A_DEFINITION = new Set(['if', 'for', 'while', 'switch', 'catch', 'return', 'function', 'else', 'with', 'using', 'lock', 'foreach', 'synchronized', 'typeof', 'sizeof']);

export class LocalHashEmbedder implements Embedder {
  readonly id = LOCAL_EMBEDDER_ID;
  readonly dimension = LOCAL_EMBEDDER_DIMENSION;

  async embed(texts: readonly string[], kind: EmbeddingKind): Promise<Float32Array[]> {
    return texts.map((text) => this.embedOne(text, kind));
  }

  embedOne(text: string, kind: EmbeddingKind): Float32Array {
    const vector = new Float32Array(this.dimension);
    const counts = new Map<string, number>();
    for (const m of text.matchAll(TOKEN)) {
      const token = m[0];
      if (token.length < 2) continue;
      counts.set(token, (counts.get(token) ?? 0) + 1);
    }
    // A query naming parseInvoiceTotal is about that name more than about every "parse".
    const partWeight = kind === 'query' ? WEIGHT.queryPart : WEIGHT.part;
    for (const [token, count] of counts) {
      // Repeats matter less and less: a chunk calling foo ten times is not ten times about foo.
      const tf = 1 + Math.log(count);
      // parse_invoice_total, parseInvoiceTotal and ParseInvoiceTotal are one name.
      const lower = canonical(token);
      if (lower.length < 2) continue;
      // Stop words, numbers and hash-like strings (lock files, fixtures) say little about meaning.
      const weak = STOP.has(lower) || looksRandom(token);
      this.add(vector, hash(WORD, lower), tf * (weak ? WEIGHT.stop : WEIGHT.word), weak ? 1 : HEAVY_COPIES);
      if (weak) continue;
      const parts = splitIdentifier(token);
      if (parts.length > 1) {
        for (const part of parts) {
          if (part.length > 1) this.add(vector, hash(WORD, part), tf * (STOP.has(part) ? WEIGHT.stop : partWeight));
        }
      }
      const marked = `\u0002${lower}\u0003`;
      const trigrams = marked.length - 2;
      const weight = (tf * WEIGHT.trigrams) / Math.sqrt(trigrams);
      for (let i = 0; i < trigrams; i++) this.add(vector, hashRange(TRIGRAM, marked, i, i + 3), weight);
      if (kind === 'query') this.add(vector, hash(DEFINITION, lower), WEIGHT.queryDefinition, HEAVY_COPIES);
    }
    if (kind === 'document') {
      for (const name of definedNames(text)) this.add(vector, hash(DEFINITION, name), WEIGHT.definition, HEAVY_COPIES);
    }
    return normalize(vector);
  }

  /**
   * Adds a feature to `copies` buckets at weight / sqrt(copies) each: a true match still
   * scores the full weight, while a collision with another feature in one bucket scores
   * only 1/copies of it. Heavy features (whole words, definitions) are spread this way.
   */
  private add(vector: Float32Array, h: number, weight: number, copies = 1): void {
    const w = copies === 1 ? weight : weight / Math.sqrt(copies);
    for (let c = 0; c < copies; c++) {
      const mixed = fmix32(h + Math.imul(c, 0x9e3779b9));
      const bucket = mixed % this.dimension;
      // Signed hashing: collisions cancel out on average instead of piling up.
      vector[bucket]! += mixed & 0x80000000 ? -w : w;
    }
  }
}

/**
 * Numbers, hex digests, base64 and other tokens no one asks about by name: long tokens
 * with digits scattered through them (identifiers like `parseHttp2Frame` have one run).
 */
function looksRandom(token: string): boolean {
  if (/^[0-9]+$/.test(token)) return true;
  return token.length >= 12 && (token.match(/[0-9]+/g)?.length ?? 0) >= 3;
}

const canonical = (identifier: string): string => {
  const lower = identifier.toLowerCase();
  return lower.includes('_') || lower.includes('$') ? lower.replace(/[_$]/g, '') : lower;
};

/** Names the text defines, in canonical form (lower case, no underscores). */
export function definedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const pattern of DEFINITIONS) {
    for (const m of text.matchAll(pattern)) {
      const name = m[1] === undefined ? undefined : canonical(m[1]);
      if (name && name.length > 1 && !NOT_A_DEFINITION.has(name) && !STOP.has(name)) names.add(name);
    }
  }
  return names;
}

/**
 * `parseHTTPRequest2_body` -> ["parse", "http", "request", "2", "body"]: splits at `_` and
 * `$`, lower-to-upper, letter-to-digit, and before the last capital of a run followed by a
 * lower-case letter. One pass over the characters: this runs for every token of every chunk.
 */
export function splitIdentifier(token: string): string[] {
  const parts: string[] = [];
  let start = 0;
  for (let i = 0; i < token.length; i++) {
    const k = charClass(token.charCodeAt(i));
    if (k === SEPARATOR) {
      if (i > start) parts.push(token.slice(start, i).toLowerCase());
      start = i + 1;
      continue;
    }
    if (i === start) continue;
    const prev = charClass(token.charCodeAt(i - 1));
    const boundary =
      (prev === LOWER && k === UPPER) ||
      (prev === DIGIT) !== (k === DIGIT) ||
      (prev === UPPER && k === UPPER && i + 1 < token.length && charClass(token.charCodeAt(i + 1)) === LOWER);
    if (boundary) {
      parts.push(token.slice(start, i).toLowerCase());
      start = i;
    }
  }
  if (start < token.length) parts.push(token.slice(start).toLowerCase());
  return parts;
}

const SEPARATOR = 0;
const LOWER = 1;
const UPPER = 2;
const DIGIT = 3;

function charClass(c: number): number {
  if (c >= 97 && c <= 122) return LOWER;
  if (c >= 65 && c <= 90) return UPPER;
  if (c >= 48 && c <= 57) return DIGIT;
  return SEPARATOR;
}

const hash = (seed: number, s: string): number => hashRange(seed, s, 0, s.length);

/** FNV-1a over a range of UTF-16 code units, seeded per feature kind. */
function hashRange(seed: number, s: string, start: number, end: number): number {
  let h = (2166136261 ^ seed) >>> 0;
  for (let i = start; i < end; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return h;
}
