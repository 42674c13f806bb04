import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OpenAIEmbedder } from '../../src/retrieval/openai-embedder.adapter';

interface EmbeddingsRequest {
  model: string;
  input: string[];
  encoding_format?: string;
  dimensions?: number;
}

/** POST /v1/embeddings as OpenAI answers it: base64 float32 when asked, data items by index. */
function fakeOpenAI(size: (req: EmbeddingsRequest) => number) {
  const requests: { body: EmbeddingsRequest; authorization: string | undefined }[] = [];
  const server: Server = createServer((req, res) => void answer(req, res));
  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    const body = JSON.parse(raw) as EmbeddingsRequest;
    requests.push({ body, authorization: req.headers.authorization });
    if (req.url !== '/v1/embeddings') {
      res.writeHead(404).end();
      return;
    }
    const data = body.input.map((text, index) => {
      // Vector i of a text points at the text's length: easy to check order and scaling.
      const v = new Float32Array(size(body));
      v[text.length % v.length] = 3;
      return {
        object: 'embedding',
        index,
        embedding: body.encoding_format === 'base64' ? Buffer.from(v.buffer).toString('base64') : Array.from(v),
      };
    });
    data.reverse(); // the API does not promise order; the index does
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 } }));
  }
  return {
    requests,
    async start(): Promise<string> {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    },
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('OpenAI embeddings adapter', () => {
  it('embeds in batches, in input order, as unit vectors of the model dimension', async () => {
    const api = fakeOpenAI(() => 1536);
    const baseURL = await api.start();
    try {
      const embedder = new OpenAIEmbedder({ apiKey: 'sk-test', baseURL, model: 'text-embedding-3-small', dimensions: null, timeoutMs: 5000 });
      expect([embedder.id, embedder.dimension]).toEqual(['openai-text-embedding-3-small', 1536]);
      const texts = Array.from({ length: 200 }, (_, i) => 'x'.repeat(i + 1));
      const vectors = await embedder.embed(texts, 'document');
      expect(api.requests.map((r) => r.body.input.length)).toEqual([96, 96, 8]);
      expect(api.requests.every((r) => r.authorization === 'Bearer sk-test' && r.body.model === 'text-embedding-3-small')).toBe(true);
      expect(api.requests.some((r) => 'dimensions' in r.body)).toBe(false);
      vectors.forEach((v, i) => {
        expect(v).toHaveLength(1536);
        expect(v[(i + 1) % 1536]).toBeCloseTo(1, 6);
      });
    } finally {
      await api.stop();
    }
  });

  it('asks for shortened vectors when a dimension is configured, and refuses vectors of another size', async () => {
    const api = fakeOpenAI((req) => (req.model === 'liar' ? 10 : (req.dimensions ?? 1536)));
    const baseURL = await api.start();
    try {
      const short = new OpenAIEmbedder({ apiKey: 'k', baseURL, model: 'text-embedding-3-large', dimensions: 256, timeoutMs: 5000 });
      expect((await short.embed(['a'], 'query'))[0]).toHaveLength(256);
      expect(api.requests[0]!.body.dimensions).toBe(256);
      const liar = new OpenAIEmbedder({ apiKey: 'k', baseURL, model: 'liar', dimensions: 12, timeoutMs: 5000 });
      await expect(liar.embed(['a'], 'query')).rejects.toMatchObject({ kind: 'embedder-mismatch' });
    } finally {
      await api.stop();
    }
  });

  it('needs a dimension for a model whose output size it does not know', () => {
    expect(() => new OpenAIEmbedder({ apiKey: 'k', baseURL: null, model: 'my-embedder', dimensions: null, timeoutMs: 5000 })).toThrow(
      /OPENAI_EMBEDDING_DIMENSIONS/,
    );
  });
});
