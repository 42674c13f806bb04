import OpenAI from 'openai';
import { normalize, type Embedder, type EmbeddingKind } from './embedder.port';
import { RetrievalError } from './retrieval-error';

/** Output sizes of OpenAI's embedding models; others need OPENAI_EMBEDDING_DIMENSIONS. */
export const OPENAI_EMBEDDING_DIMENSIONS: Readonly<Record<string, number>> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

export interface OpenAIEmbedderOptions {
  readonly apiKey: string;
  readonly baseURL: string | null;
  /** The OpenAI-Organization and OpenAI-Project headers, when set. */
  readonly organization?: string | null;
  readonly project?: string | null;
  readonly model: string;
  /** Asked of the API (text-embedding-3 models can shorten their vectors); else the model's own size. */
  readonly dimensions: number | null;
  readonly timeoutMs: number;
}

/** Inputs per request: well under the API's 2,048 inputs and 300k tokens (chunks are <= 4,000 chars). */
const BATCH = 96;

/** OpenAI embeddings (`/v1/embeddings`), in batches, in input order. */
export class OpenAIEmbedder implements Embedder {
  readonly id: string;
  readonly dimension: number;
  private readonly client: OpenAI;
  private readonly model: string;
  private readonly askDimensions: number | null;

  constructor(options: OpenAIEmbedderOptions) {
    const known = OPENAI_EMBEDDING_DIMENSIONS[options.model];
    const dimension = options.dimensions ?? known;
    if (!dimension) {
      throw new RetrievalError(
        'bad-request',
        `the output size of embedding model "${options.model}" is unknown: set OPENAI_EMBEDDING_DIMENSIONS`,
      );
    }
    this.id = `openai-${options.model}`;
    this.dimension = dimension;
    this.model = options.model;
    this.askDimensions = options.dimensions;
    this.client = new OpenAI({
      apiKey: options.apiKey,
      ...(options.baseURL ? { baseURL: options.baseURL } : {}),
      // Given explicitly (null when unset): config.ts is the one reader of the environment.
      organization: options.organization ?? null,
      project: options.project ?? null,
      timeout: options.timeoutMs,
      maxRetries: 2,
    });
  }

  async embed(texts: readonly string[], _kind: EmbeddingKind): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += BATCH) {
      const input = texts.slice(start, start + BATCH).map((t) => (t.trim() === '' ? ' ' : t));
      const res = await this.client.embeddings.create({
        model: this.model,
        input,
        ...(this.askDimensions ? { dimensions: this.askDimensions } : {}),
      });
      const byIndex = [...res.data].sort((a, b) => a.index - b.index);
      if (byIndex.length !== input.length) {
        throw new RetrievalError('unavailable', `the embedding provider returned ${byIndex.length} vectors for ${input.length} texts`);
      }
      for (const item of byIndex) {
        // The SDK decodes its default base64 transport into a Float32Array despite the number[] typing.
        const vector = Float32Array.from(item.embedding);
        if (vector.length !== this.dimension) {
          throw new RetrievalError(
            'embedder-mismatch',
            `embedding model "${this.model}" returned vectors of dimension ${vector.length}, expected ${this.dimension}`,
          );
        }
        out.push(normalize(vector));
      }
    }
    return out;
  }
}
