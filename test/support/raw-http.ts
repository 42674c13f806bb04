import net from 'node:net';

/** What a server sent on one raw connection, and how it ended. */
export interface RawExchange {
  /** Everything the server sent, as text. */
  readonly text: string;
  /** The status of the first response, or null when none came. */
  readonly status: number | null;
  /** Milliseconds from connecting until the server closed the connection (null: still open at `waitMs`). */
  readonly closedAfterMs: number | null;
}

export interface RawRequest {
  /** Written at once: the request line, headers and whatever part of the body. */
  readonly head: string;
  /** Further pieces written one by one, `everyMs` apart, while the connection is open. */
  readonly drip?: { readonly pieces: readonly (string | Buffer)[]; readonly everyMs: number };
  /** How long to wait for the server to close the connection. */
  readonly waitMs: number;
}

/**
 * One HTTP/1.1 exchange over a plain socket, to see what a server does with requests no
 * HTTP client would send (a body announced but not sent, headers that trickle in).
 */
export function rawExchange(url: string, request: RawRequest): Promise<RawExchange> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect({ host: hostname, port: Number(port) });
    const received: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    let dripper: NodeJS.Timeout | undefined;
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      clearInterval(dripper);
      socket.destroy();
      const text = Buffer.concat(received).toString('utf8');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
      resolve({ text, status: status ? Number(status) : null, closedAfterMs: closed ? Date.now() - started : null });
    };
    socket.on('data', (d: Buffer) => received.push(d));
    // A reset after the answer still counts as the server closing.
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('connect', () => {
      socket.write(request.head);
      const pieces = [...(request.drip?.pieces ?? [])];
      if (request.drip) {
        dripper = setInterval(() => {
          const piece = pieces.shift();
          if (piece === undefined) return clearInterval(dripper);
          if (!socket.destroyed) socket.write(piece);
        }, request.drip.everyMs);
      }
      timer = setTimeout(() => finish(false), request.waitMs);
    });
  });
}

/** The JSON body of a raw response (after the blank line). */
export const rawBody = (text: string): unknown => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
