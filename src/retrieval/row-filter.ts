import { matchesPathPrefix, normalizePathPrefix, normalizePathPrefixes } from './chunk-filter';
import type { Interner } from './interner';
import type { ChunkFilter } from './vector-store.port';

const ANY = -2;
const UNKNOWN = -3;

/**
 * A ChunkFilter compiled against a table's interned strings: repo and language become
 * integer comparisons, and a path prefix is matched once per distinct path (rows of one
 * file share a path code), not once per row.
 */
export class RowFilter {
  /** True when the filter lets every row through. */
  readonly everything: boolean;
  private readonly repo: number;
  private readonly language: number;
  private readonly prefix: string | null;
  /** Any one of these must match (null: no multi-prefix scope). */
  private readonly anyPrefix: string[] | null;
  /** Per path code: 0 not yet checked, 1 matches, 2 does not. */
  private readonly paths: Uint8Array;

  constructor(
    filter: ChunkFilter,
    private readonly strings: Interner,
  ) {
    this.repo = filter.repo == null ? ANY : (strings.find(filter.repo) ?? UNKNOWN);
    this.language = filter.language == null ? ANY : (strings.find(filter.language) ?? UNKNOWN);
    this.prefix = normalizePathPrefix(filter.pathPrefix);
    this.anyPrefix = normalizePathPrefixes(filter.pathPrefixes);
    const scoped = this.prefix !== null || this.anyPrefix !== null;
    this.everything = this.repo === ANY && this.language === ANY && !scoped;
    this.paths = new Uint8Array(scoped ? strings.count : 0);
  }

  accepts(repo: number, language: number, path: number): boolean {
    if (this.repo !== ANY && repo !== this.repo) return false;
    if (this.language !== ANY && language !== this.language) return false;
    if (this.prefix === null && this.anyPrefix === null) return true;
    let known = this.paths[path]!;
    if (known === 0) {
      known = this.pathMatches(this.strings.value(path)) ? 1 : 2;
      this.paths[path] = known;
    }
    return known === 1;
  }

  private pathMatches(path: string): boolean {
    if (this.prefix !== null && !matchesPathPrefix(path, this.prefix)) return false;
    return this.anyPrefix === null || this.anyPrefix.some((p) => matchesPathPrefix(path, p));
  }
}
