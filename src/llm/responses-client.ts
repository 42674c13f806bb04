import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** Response headers as the retry policy reads them. */
export interface HeaderLookup {
  get(name: string): string | null;
}

/** The provider answered with an HTTP error status; `message` and `code` are what its error body said. */
export class ProviderHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | null,
    readonly providerMessage: string,
    readonly headers: HeaderLookup,
  ) {
    super(`HTTP ${status}`);
    this.name = 'ProviderHttpError';
  }
}

/** The provider could not be reached, or the connection broke before it answered. */
export class ProviderConnectionError extends Error {
  constructor(
    readonly phase: 'connect' | 'stream',
    options?: { cause?: unknown },
  ) {
    super(phase === 'connect' ? 'could not reach the model provider' : 'the connection to the model provider broke while streaming', options);
    this.name = 'ProviderConnectionError';
  }
}

/** The call was aborted through its signal (cancel, shutdown). */
export class ProviderCallAborted extends Error {
  constructor() {
    super('the provider call was aborted');
    this.name = 'ProviderCallAborted';
  }
}

/** The call, stream included, did not finish within its deadline. */
export class ProviderTimeout extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the provider did not finish within ${timeoutMs} ms`);
    this.name = 'ProviderTimeout';
  }
}

export interface StreamCallOptions {
  /** Aborts the call: it rejects with ProviderCallAborted and the connection closes. */
  readonly signal: AbortSignal;
  /** Deadline of the whole call, stream included: it rejects with ProviderTimeout. */
  readonly timeoutMs: number;
}

export interface SseClientOptions {
  /** The API root, e.g. https://api.openai.com/v1. */
  readonly baseURL: string;
  /** Sent with every request (authorization and the like). */
  readonly headers: Readonly<Record<string, string>>;
}

/** Error bodies are read this far at most (they are a few hundred bytes). */
const MAX_ERROR_BODY = 64 * 1024;

/**
 * A lean client for the Responses API's streamed answers: one POST with a JSON body over a
 * keep-alive agent, the server-sent events parsed as they arrive and handed over as parsed
 * JSON. It replaces the openai SDK on the execute path, whose per-call work (request
 * building, fetch, web streams, its SSE iterator) cost more CPU and memory per call than
 * everything else the adapter did; retries, timeouts and error wording stay the adapter's.
 */
export class SseJsonClient {
  private readonly base: URL;
  /** Resolved once per path: URL parsing is a visible share of a call this lean. */
  private readonly urls = new Map<string, URL>();
  private readonly agent: HttpAgent;
  private readonly send: typeof httpRequest;

  constructor(private readonly options: SseClientOptions) {
    this.base = new URL(options.baseURL.endsWith('/') ? options.baseURL : `${options.baseURL}/`);
    const https = this.base.protocol === 'https:';
    this.agent = https ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
    this.send = https ? httpsRequest : httpRequest;
  }

  /**
   * POSTs `body` to `path` and calls `onData` with each event's parsed data, in order.
   * Resolves when the stream ends; rejects with ProviderHttpError, ProviderConnectionError,
   * ProviderCallAborted, ProviderTimeout, or whatever `onData` threw (the request is closed then).
   */
  stream(path: string, body: string, options: StreamCallOptions, onData: (data: unknown) => void): Promise<void> {
    const { signal, timeoutMs } = options;
    return new Promise<void>((resolve, reject) => {
      if (signal.aborted) return reject(new ProviderCallAborted());
      let settled = false;
      let answered = false;
      let req: ClientRequest | null = null;
      const timer = setTimeout(() => finish(new ProviderTimeout(timeoutMs)), timeoutMs);
      const finish = (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (error === null) return resolve();
        // Closing the socket tells the provider to stop generating.
        req?.destroy();
        reject(error);
      };
      const onAbort = () => finish(new ProviderCallAborted());
      signal.addEventListener('abort', onAbort, { once: true });
      req = this.send(this.urlOf(path), {
        method: 'POST',
        agent: this.agent,
        headers: {
          ...this.options.headers,
          'content-type': 'application/json',
          accept: 'text/event-stream',
          'content-length': Buffer.byteLength(body),
        },
      });
      req.on('error', (e) => finish(answered ? new ProviderConnectionError('stream', { cause: e }) : new ProviderConnectionError('connect', { cause: e })));
      req.on('response', (res) => {
        answered = true;
        res.on('error', (e) => finish(new ProviderConnectionError('stream', { cause: e })));
        // Without 'end' first, the connection broke mid-answer (after it, no error is built: every call closes).
        res.on('close', () => {
          if (!settled) finish(new ProviderConnectionError('stream'));
        });
        const status = res.statusCode ?? 0;
        if (status < 200 || status >= 300) return readError(res, status, finish);
        readEvents(res, (data) => {
          if (!settled) onData(data);
        }, finish);
      });
      req.end(body);
    });
  }

  private urlOf(path: string): URL {
    let url = this.urls.get(path);
    if (!url) {
      url = new URL(path, this.base);
      this.urls.set(path, url);
    }
    return url;
  }
}

/** Server-sent events (the subset the Responses API uses): `data:` lines up to a blank line make one event. */
function readEvents(res: IncomingMessage, onData: (data: unknown) => void, finish: (error: unknown) => void): void {
  res.setEncoding('utf8');
  let rest = '';
  let data: string[] = [];
  const line = (text: string) => {
    if (text === '') {
      if (data.length === 0) return;
      const joined = data.length === 1 ? (data[0] as string) : data.join('\n');
      data = [];
      if (joined.startsWith('[DONE]')) return;
      onData(JSON.parse(joined));
      return;
    }
    if (text.startsWith('data:')) data.push(text.charCodeAt(5) === 32 ? text.slice(6) : text.slice(5));
    // `event:`, `id:`, `retry:` and comments: the type is in the data too.
  };
  res.on('data', (chunk: string) => {
    try {
      let text = rest + chunk;
      let at: number;
      while ((at = text.indexOf('\n')) >= 0) {
        const end = at > 0 && text.charCodeAt(at - 1) === 13 ? at - 1 : at;
        line(text.slice(0, end));
        text = text.slice(at + 1);
      }
      rest = text;
    } catch (e) {
      finish(e);
    }
  });
  res.on('end', () => {
    try {
      if (rest !== '') line(rest);
      line('');
      finish(null);
    } catch (e) {
      finish(e);
    }
  });
}

/** The provider's error body, as the OpenAI API shapes it: {"error": {"message", "code"}}. */
function readError(res: IncomingMessage, status: number, finish: (error: unknown) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  res.on('data', (chunk: Buffer) => {
    if (size < MAX_ERROR_BODY) chunks.push(chunk);
    size += chunk.length;
  });
  res.on('end', () => {
    let message = '';
    let code: string | null = null;
    try {
      const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { error?: { message?: unknown; code?: unknown } };
      if (typeof parsed.error?.message === 'string') message = parsed.error.message;
      if (typeof parsed.error?.code === 'string') code = parsed.error.code;
    } catch {
      // Not JSON (a proxy's page): the status says enough.
    }
    finish(new ProviderHttpError(status, code, message, headerLookup(res.headers)));
  });
}

function headerLookup(headers: IncomingHttpHeaders): HeaderLookup {
  return {
    get(name) {
      const value = headers[name.toLowerCase()];
      return Array.isArray(value) ? (value[0] ?? null) : (value ?? null);
    },
  };
}
