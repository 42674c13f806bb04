import { seededRandom } from '../src/domain/seeded-random';
import { normalize, type Embedder, type EmbeddingKind } from '../src/retrieval/embedder.port';
import { LocalHashEmbedder } from '../src/retrieval/local-embedder.adapter';

export const MODEL_LIKE_DIMENSION = 1536;
/** Dimensions of the latent "meaning" space the local features are mapped into. */
const LATENT = 256;
/** How fast the latent directions' variance falls off: direction i carries (1 + i/8)^-DECAY of the first's scale. */
const DECAY = 0.5;
/** Shares of a text's meaning in latent topics and in its own words and identifiers. */
const TOPIC_WEIGHT = 0.85;
const DETAIL_WEIGHT = 0.5;
/** Latent topics and the local embedder's 1,024 features, zero-padded to a power of two for the Hadamard transform. */
const PADDED = 2048;

/**
 * Stand-in for a 1,536-dimension embedding model (text-embedding-3-small's size) where no
 * model can be reached. Uniform random vectors would be the wrong test for an approximate
 * index: every pair is almost orthogonal, so neighbours are noise and recall means little.
 * Model embeddings instead are dense, anisotropic and clustered:
 *
 * - content: the local hashing embedder's features (which words and identifiers the text
 *   holds, so a question naming a function meets the chunk defining it), partly mixed into
 *   256 latent "topic" directions whose variance falls off (so most of the variance lives
 *   in a few dozen directions, as with a model), partly kept as they are (lexical detail),
 *   then spread over every dimension by a randomised Hadamard transform (random signs,
 *   FWHT, 1,536 of the 2,048 outputs kept: a Johnson-Lindenstrauss projection);
 * - a direction every text shares (model embeddings sit in a narrow cone: unrelated texts
 *   still score ~0.1-0.2);
 * - a topic per directory and a smaller one per file for documents, so code of one service
 *   or file clusters the way it does under a model (queries carry no path, so they get none);
 * - a fixed log-normal scale per dimension: some dimensions vary much more than others.
 *
 * Deterministic: the same text always embeds to the same vector.
 */
export class ModelLikeEmbedder implements Embedder {
  readonly id = 'bench-model-like-1536';
  readonly dimension = MODEL_LIKE_DIMENSION;
  private readonly local = new LocalHashEmbedder();
  private readonly signs: Float32Array;
  private readonly scale: Float32Array;
  private readonly shared: Float32Array;
  private readonly topics = new Map<string, Float32Array>();
  /** Feature -> latent map, rows scaled by a decaying spectrum: a few directions carry most of the variance. */
  private readonly mixing: Float32Array;
  private readonly padded = new Float32Array(LATENT);
  private readonly detail = new Float32Array(PADDED);
  private lastFile: { path: string; vector: Float32Array } | null = null;

  constructor(seed = 1536) {
    const next = seededRandom(seed);
    this.signs = Float32Array.from({ length: PADDED }, () => (next() < 0.5 ? -1 : 1));
    const gauss = gaussian(next);
    this.scale = Float32Array.from({ length: this.dimension }, () => Math.exp(0.35 * gauss()));
    this.shared = randomUnit(seed ^ 0x5bd1e995, this.dimension);
    const spectrum = Float32Array.from({ length: LATENT }, (_, i) => (1 + i / 8) ** -DECAY);
    let energy = 0;
    for (const s of spectrum) energy += s * s;
    const features = this.local.dimension;
    this.mixing = new Float32Array(features * LATENT);
    for (let f = 0; f < features; f++) {
      for (let i = 0; i < LATENT; i++) this.mixing[f * LATENT + i] = (gauss() * spectrum[i]!) / Math.sqrt(energy);
    }
  }

  async embed(texts: readonly string[], kind: EmbeddingKind): Promise<Float32Array[]> {
    return texts.map((text) => this.embedOne(text, kind));
  }

  embedOne(text: string, kind: EmbeddingKind): Float32Array {
    const content = this.local.embedOne(text, kind);
    // Topics: the features mixed into a few latent directions; detail: the features themselves.
    const latent = this.padded;
    latent.fill(0);
    for (let f = 0; f < content.length; f++) {
      const x = content[f]!;
      if (x === 0) continue;
      const row = this.mixing.subarray(f * LATENT, (f + 1) * LATENT);
      for (let i = 0; i < LATENT; i++) latent[i]! += x * row[i]!;
    }
    const detail = this.detail;
    detail.fill(0);
    for (let f = 0; f < content.length; f++) detail[LATENT + f] = content[f]!;
    for (let i = 0; i < LATENT; i++) detail[i] = TOPIC_WEIGHT * latent[i]!;
    for (let i = LATENT; i < LATENT + content.length; i++) detail[i]! *= DETAIL_WEIGHT;
    for (let i = 0; i < PADDED; i++) detail[i]! *= this.signs[i]!;
    hadamard(detail);
    const out = new Float32Array(this.dimension);
    const norm = 1 / Math.sqrt(PADDED);
    for (let j = 0; j < this.dimension; j++) out[j] = detail[j]! * norm + 0.3 * this.shared[j]!;
    // Ingest embeds `${path}\n${text}`; a query has no path.
    const path = kind === 'document' ? text.slice(0, text.indexOf('\n')) : '';
    if (path !== '') {
      const dir = this.topicOf(path.slice(0, path.lastIndexOf('/') + 1));
      const file = this.fileTopic(path);
      for (let j = 0; j < this.dimension; j++) out[j]! += 0.3 * dir[j]! + 0.2 * file[j]!;
    }
    for (let j = 0; j < this.dimension; j++) out[j]! *= this.scale[j]!;
    return normalize(out);
  }

  private topicOf(dir: string): Float32Array {
    let v = this.topics.get(dir);
    if (!v) {
      v = randomUnit(hash(dir), this.dimension);
      this.topics.set(dir, v);
    }
    return v;
  }

  /** Chunks of one file arrive together: remember the last file's vector only. */
  private fileTopic(path: string): Float32Array {
    if (this.lastFile?.path !== path) this.lastFile = { path, vector: randomUnit(hash(path) ^ 0x27d4eb2f, this.dimension) };
    return this.lastFile.vector;
  }
}

/** In-place fast Walsh-Hadamard transform (unnormalised); length a power of two. */
function hadamard(v: Float32Array): void {
  for (let h = 1; h < v.length; h *= 2) {
    for (let i = 0; i < v.length; i += 2 * h) {
      for (let j = i; j < i + h; j++) {
        const a = v[j]!;
        const b = v[j + h]!;
        v[j] = a + b;
        v[j + h] = a - b;
      }
    }
  }
}

function gaussian(next: () => number): () => number {
  return () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
}

function randomUnit(seed: number, dimension: number): Float32Array {
  const gauss = gaussian(seededRandom(seed));
  return normalize(Float32Array.from({ length: dimension }, gauss));
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}
