import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A Qdrant stand-in speaking the REST API as Qdrant's OpenAPI spec (v1.x) defines it, for
 * the endpoints the adapter uses: collections (exists, get, create), payload indexes,
 * points upsert / delete (ids or filter) / set payload / scroll / query. Requests are
 * validated the way Qdrant validates them (UUID or integer ids, named vector names and
 * sizes, filter shapes) and recorded so tests can assert what was sent. Anything it does
 * not implement answers 400/404, so an adapter using an unexpected endpoint or shape fails.
 */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Record<string, string>;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: unknown;
}

interface VectorParams {
  size: number;
  distance: 'Cosine' | 'Dot' | 'Euclid' | 'Manhattan';
}

interface StoredPoint {
  id: string | number;
  vectors: Record<string, number[]>;
  payload: Record<string, unknown>;
}

interface Collection {
  /** A single unnamed vector config, or named ones. */
  vectors: VectorParams | Record<string, VectorParams>;
  points: Map<string, StoredPoint>;
  payloadSchema: Record<string, { data_type: string; points: number }>;
}

type Condition = Record<string, unknown>;

class BadRequest extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

export class FakeQdrant {
  readonly requests: RecordedRequest[] = [];
  readonly collections = new Map<string, Collection>();
  private server: Server | null = null;
  private operationId = 0;

  constructor(private readonly apiKey: string | null = null) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  /** A collection made by someone else (e.g. another indexer), for mismatch tests. */
  createCollection(name: string, vectors: Collection['vectors']): void {
    this.collections.set(name, { vectors, points: new Map(), payloadSchema: {} });
  }

  requestsTo(method: string, pathPattern: RegExp): RecordedRequest[] {
    return this.requests.filter((r) => r.method === method && pathPattern.test(r.path));
  }

  // ------------------------------------------------------------------ HTTP

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const url = new URL(req.url ?? '/', 'http://localhost');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    const reply = (status: number, payload: Record<string, unknown>) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ...payload, time: (performance.now() - started) / 1000 }));
    };
    try {
      body = raw === '' ? undefined : JSON.parse(raw);
    } catch {
      reply(400, { status: { error: 'Format error in JSON body' } });
      return;
    }
    this.requests.push({
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body,
    });
    if (this.apiKey !== null && req.headers['api-key'] !== this.apiKey) {
      reply(401, { status: { error: 'Must provide an API key or an Authorization bearer token' } });
      return;
    }
    try {
      const result = this.route(req.method ?? 'GET', url.pathname, body);
      reply(200, { result, status: 'ok' });
    } catch (e) {
      if (e instanceof BadRequest) reply(e.status, { status: { error: e.message } });
      else reply(500, { status: { error: String(e) } });
    }
  }

  private route(method: string, path: string, body: unknown): unknown {
    const m = /^\/collections\/([^/]+)(\/.*)?$/.exec(path);
    if (!m) throw new BadRequest(404, `no route ${method} ${path}`);
    const name = decodeURIComponent(m[1]!);
    const rest = m[2] ?? '';
    const key = `${method} ${rest}`;
    switch (key) {
      case 'GET /exists':
        return { exists: this.collections.has(name) };
      case 'GET ':
        return this.info(name);
      case 'PUT ':
        return this.create(name, body);
      case 'PUT /index':
        return this.createIndex(name, body);
      case 'PUT /points':
        return this.upsert(name, body);
      case 'POST /points/delete':
        return this.delete(name, body);
      case 'POST /points/payload':
        return this.setPayload(name, body);
      case 'POST /points/batch':
        return this.batch(name, body);
      case 'POST /points/scroll':
        return this.scroll(name, body);
      case 'POST /points/query':
        return this.query(name, body);
      default:
        throw new BadRequest(404, `no route ${method} ${path}`);
    }
  }

  // ------------------------------------------------------------------ collections

  private collection(name: string): Collection {
    const c = this.collections.get(name);
    if (!c) throw new BadRequest(404, `Not found: Collection \`${name}\` doesn't exist!`);
    return c;
  }

  private info(name: string): unknown {
    const c = this.collection(name);
    return {
      status: 'green',
      optimizer_status: 'ok',
      indexed_vectors_count: 0,
      points_count: c.points.size,
      segments_count: 1,
      config: {
        params: { vectors: c.vectors, shard_number: 1, replication_factor: 1, write_consistency_factor: 1, on_disk_payload: true },
        hnsw_config: { m: 16, ef_construct: 100, full_scan_threshold: 10000, max_indexing_threads: 0, on_disk: false },
        optimizer_config: {
          deleted_threshold: 0.2,
          vacuum_min_vector_number: 1000,
          default_segment_number: 0,
          max_segment_size: null,
          memmap_threshold: null,
          indexing_threshold: 20000,
          flush_interval_sec: 5,
          max_optimization_threads: null,
        },
        wal_config: { wal_capacity_mb: 32, wal_segments_ahead: 0 },
        quantization_config: null,
      },
      payload_schema: c.payloadSchema,
    };
  }

  private create(name: string, body: unknown): boolean {
    if (this.collections.has(name)) throw new BadRequest(409, `Wrong input: Collection \`${name}\` already exists!`);
    const vectors = (body as { vectors?: unknown } | undefined)?.vectors;
    if (!vectors || typeof vectors !== 'object') throw new BadRequest(400, 'Format error in JSON body: missing field `vectors`');
    const check = (v: unknown) => {
      const p = v as Partial<VectorParams>;
      if (!Number.isInteger(p.size) || (p.size ?? 0) < 1 || !['Cosine', 'Dot', 'Euclid', 'Manhattan'].includes(String(p.distance))) {
        throw new BadRequest(400, 'Format error in JSON body: invalid vector params');
      }
    };
    if ('size' in vectors) check(vectors);
    else for (const v of Object.values(vectors)) check(v);
    this.collections.set(name, { vectors: vectors as Collection['vectors'], points: new Map(), payloadSchema: {} });
    return true;
  }

  private createIndex(name: string, body: unknown): unknown {
    const c = this.collection(name);
    const { field_name, field_schema } = (body ?? {}) as { field_name?: unknown; field_schema?: unknown };
    if (typeof field_name !== 'string') throw new BadRequest(400, 'Format error in JSON body: missing field `field_name`');
    const type = typeof field_schema === 'string' ? field_schema : (field_schema as { type?: string } | undefined)?.type;
    if (!['keyword', 'integer', 'float', 'bool', 'geo', 'text', 'datetime', 'uuid'].includes(String(type))) {
      throw new BadRequest(400, 'Format error in JSON body: unknown field schema');
    }
    c.payloadSchema[field_name] = { data_type: String(type), points: 0 };
    return this.updated();
  }

  // ------------------------------------------------------------------ points

  private upsert(name: string, body: unknown): unknown {
    const c = this.collection(name);
    const points = (body as { points?: unknown } | undefined)?.points;
    if (!Array.isArray(points)) throw new BadRequest(400, 'Format error in JSON body: expected `points` or `batch`');
    const stored: StoredPoint[] = points.map((p: { id?: unknown; vector?: unknown; payload?: unknown }) => ({
      id: parseId(p.id),
      vectors: this.vectorsOf(c, p.vector),
      payload: (p.payload ?? {}) as Record<string, unknown>,
    }));
    for (const p of stored) c.points.set(idKey(p.id), p);
    return this.updated();
  }

  private delete(name: string, body: unknown): unknown {
    const c = this.collection(name);
    const selector = (body ?? {}) as { points?: unknown; filter?: unknown };
    if (Array.isArray(selector.points)) {
      for (const id of selector.points) c.points.delete(idKey(parseId(id)));
    } else if (selector.filter && typeof selector.filter === 'object') {
      for (const [k, p] of c.points) if (matches(p.payload, selector.filter as Condition)) c.points.delete(k);
    } else {
      throw new BadRequest(400, 'Format error in JSON body: expected `points` or `filter`');
    }
    return this.updated();
  }

  private setPayload(name: string, body: unknown): unknown {
    const c = this.collection(name);
    const { payload, points, filter } = (body ?? {}) as { payload?: unknown; points?: unknown; filter?: unknown };
    if (!payload || typeof payload !== 'object') throw new BadRequest(400, 'Format error in JSON body: missing field `payload`');
    const targets = Array.isArray(points)
      ? points.map((id) => c.points.get(idKey(parseId(id))))
      : [...c.points.values()].filter((p) => filter && matches(p.payload, filter as Condition));
    for (const p of targets) if (p) Object.assign(p.payload, payload);
    return this.updated();
  }

  /** Only the operations the gateway sends in batches. */
  private batch(name: string, body: unknown): unknown {
    const operations = (body as { operations?: unknown } | undefined)?.operations;
    if (!Array.isArray(operations)) throw new BadRequest(400, 'Format error in JSON body: missing field `operations`');
    return (operations as Record<string, unknown>[]).map((op) => {
      if (!op || typeof op !== 'object' || !('set_payload' in op)) throw new BadRequest(400, 'Format error in JSON body: unsupported operation');
      return this.setPayload(name, op.set_payload);
    });
  }

  private scroll(name: string, body: unknown): unknown {
    const c = this.collection(name);
    const req = (body ?? {}) as { filter?: Condition; limit?: number; offset?: unknown; with_payload?: unknown; with_vector?: unknown };
    const limit = req.limit ?? 10;
    const sorted = [...c.points.values()]
      .filter((p) => !req.filter || matches(p.payload, req.filter))
      .sort((a, b) => compareIds(a.id, b.id));
    const start = req.offset === undefined || req.offset === null ? 0 : sorted.findIndex((p) => compareIds(p.id, parseId(req.offset)) >= 0);
    const page = start < 0 ? [] : sorted.slice(start, start + limit);
    const next = start < 0 ? undefined : sorted[start + limit];
    return {
      points: page.map((p) => ({
        id: p.id,
        payload: selectPayload(p.payload, req.with_payload ?? true),
        ...(req.with_vector ? { vector: p.vectors } : {}),
      })),
      next_page_offset: next ? next.id : null,
    };
  }

  private query(name: string, body: unknown): unknown {
    const c = this.collection(name);
    const req = (body ?? {}) as { query?: unknown; using?: string; filter?: Condition; limit?: number; with_payload?: unknown };
    const raw = Array.isArray(req.query) ? req.query : (req.query as { nearest?: unknown } | undefined)?.nearest;
    if (!Array.isArray(raw)) throw new BadRequest(400, 'Format error in JSON body: unsupported query');
    const vectorName = req.using ?? '';
    const params = 'size' in c.vectors ? (vectorName === '' ? (c.vectors as VectorParams) : undefined) : c.vectors[vectorName];
    if (!params) throw new BadRequest(400, `Wrong input: Not existing vector name error: ${vectorName}`);
    if (raw.length !== params.size) {
      throw new BadRequest(400, `Wrong input: Vector dimension error: expected dim: ${params.size}, got ${raw.length}`);
    }
    const q = unit(raw as number[]);
    return {
      points: [...c.points.values()]
        .filter((p) => !req.filter || matches(p.payload, req.filter))
        .map((p) => ({ p, score: dot(q, unit(p.vectors[vectorName] ?? [])) }))
        .sort((a, b) => b.score - a.score)
        .slice(0, req.limit ?? 10)
        .map(({ p, score }) => ({ id: p.id, version: 1, score, payload: selectPayload(p.payload, req.with_payload ?? false) })),
    };
  }

  private vectorsOf(c: Collection, vector: unknown): Record<string, number[]> {
    if ('size' in c.vectors) {
      if (!Array.isArray(vector)) throw new BadRequest(400, 'Wrong input: Not existing vector name error: ');
      this.checkSize(c.vectors as VectorParams, vector);
      return { '': vector as number[] };
    }
    if (!vector || typeof vector !== 'object' || Array.isArray(vector)) {
      throw new BadRequest(400, 'Wrong input: Not existing vector name error: ');
    }
    for (const [n, v] of Object.entries(vector)) {
      const params = (c.vectors)[n];
      if (!params) throw new BadRequest(400, `Wrong input: Not existing vector name error: ${n}`);
      this.checkSize(params, v);
    }
    return vector as Record<string, number[]>;
  }

  private checkSize(params: VectorParams, v: unknown): void {
    if (!Array.isArray(v) || v.length !== params.size) {
      throw new BadRequest(400, `Wrong input: Vector dimension error: expected dim: ${params.size}, got ${Array.isArray(v) ? v.length : 0}`);
    }
  }

  private updated(): unknown {
    return { operation_id: ++this.operationId, status: 'completed' };
  }
}

function parseId(id: unknown): string | number {
  if (typeof id === 'number' && Number.isInteger(id) && id >= 0) return id;
  if (typeof id === 'string' && UUID.test(id)) {
    const hex = id.replace(/-/g, '').toLowerCase();
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  throw new BadRequest(400, `Format error in JSON body: value ${JSON.stringify(id)} is not a valid point ID, valid values are either an unsigned integer or a UUID`);
}

const idKey = (id: string | number) => (typeof id === 'number' ? `n:${id}` : `u:${id}`);

/** Qdrant orders integer ids before UUIDs. */
function compareIds(a: string | number, b: string | number): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'number') return -1;
  if (typeof b === 'number') return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function matches(payload: Record<string, unknown>, filter: Condition): boolean {
  const list = (v: unknown): Condition[] => (v === undefined || v === null ? [] : Array.isArray(v) ? (v as Condition[]) : [v as Condition]);
  const known = new Set(['must', 'should', 'must_not', 'min_should']);
  for (const k of Object.keys(filter)) if (!known.has(k)) throw new BadRequest(400, `Format error in JSON body: unknown filter field \`${k}\``);
  const must = list(filter.must);
  const should = list(filter.should);
  const mustNot = list(filter.must_not);
  return (
    must.every((c) => condition(payload, c)) &&
    (should.length === 0 || should.some((c) => condition(payload, c))) &&
    !mustNot.some((c) => condition(payload, c))
  );
}

function condition(payload: Record<string, unknown>, c: Condition): boolean {
  if ('must' in c || 'should' in c || 'must_not' in c) return matches(payload, c);
  const { key, match } = c as { key?: unknown; match?: unknown };
  if (typeof key !== 'string' || !match || typeof match !== 'object') {
    throw new BadRequest(400, 'Format error in JSON body: unsupported condition');
  }
  const value = payload[key];
  const values = Array.isArray(value) ? value : [value];
  const m = match as { value?: unknown; any?: unknown; except?: unknown };
  if ('value' in m) return values.some((v) => v === m.value);
  if (Array.isArray(m.any)) {
    // Qdrant's MatchAny takes a list of keywords or a list of integers, never a mix.
    const any = m.any as unknown[];
    if (!(any.every((v) => typeof v === 'string') || any.every((v) => Number.isInteger(v)))) {
      throw new BadRequest(400, 'Format error in JSON body: match.any must be all strings or all integers');
    }
    return values.some((v) => any.includes(v));
  }
  if (Array.isArray(m.except)) return !values.some((v) => (m.except as unknown[]).includes(v));
  throw new BadRequest(400, 'Format error in JSON body: unsupported match');
}

function selectPayload(payload: Record<string, unknown>, selector: unknown): Record<string, unknown> | undefined {
  if (selector === false) return undefined;
  if (selector === true) return payload;
  const include = Array.isArray(selector) ? selector : (selector as { include?: unknown } | null)?.include;
  if (Array.isArray(include)) return Object.fromEntries(Object.entries(payload).filter(([k]) => include.includes(k)));
  const exclude = (selector as { exclude?: unknown } | null)?.exclude;
  if (Array.isArray(exclude)) return Object.fromEntries(Object.entries(payload).filter(([k]) => !exclude.includes(k)));
  throw new BadRequest(400, 'Format error in JSON body: invalid with_payload');
}

const unit = (v: number[]) => {
  const n = Math.hypot(...v);
  return n === 0 ? v : v.map((x) => x / n);
};
const dot = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * (b[i] ?? 0), 0);
