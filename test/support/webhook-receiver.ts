import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the receiver got, and whether its signature verified with the receiver's secret. */
export interface ReceivedWebhook {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly verified: boolean;
  /** The status the receiver answered; null while the request is held (or was never answered). */
  answered: number | null;
  /** The parsed body once verified (what `Webhook.verify` returns). */
  readonly payload: WebhookPayload | null;
}

export interface WebhookPayload {
  readonly type: string;
  readonly timestamp: string;
  readonly data: Record<string, unknown> & { sessionId: string; turnId: string | null; status: string | null; orgId: string };
}

/** How the receiver answers one request: a status (and headers), or never (the request is held open). */
export type ReceiverReply = { readonly status: number; readonly headers?: Readonly<Record<string, string>>; readonly body?: string } | { readonly hold: true };

/**
 * A webhook receiver as a customer would write one: it verifies every request with the
 * `standardwebhooks` package and the endpoint's secret, and answers 2xx, or what the test
 * scripted. It can be stopped and started again on the same port (a receiver that restarts).
 */
export interface WebhookReceiver {
  readonly url: string;
  readonly received: ReceivedWebhook[];
  /** The secrets to verify with (any of them may match: a rotation's overlap). */
  secrets: string[];
  /** The next requests get these replies, in order; then 204. */
  enqueue(...replies: ReceiverReply[]): void;
  /** Waits until `n` requests whose payload satisfies `where` have arrived. */
  waitFor(n: number, where?: (r: ReceivedWebhook) => boolean, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  /** Answers every request held open so far with `status`. */
  release(status?: number): void;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function startWebhookReceiver(port = 0): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const replies: ReceiverReply[] = [];
  const held: ServerResponse[] = [];
  let server: Server | null = null;
  let boundPort = port;
  const receiver: WebhookReceiver = {
    get url() {
      return `http://127.0.0.1:${boundPort}/hooks`;
    },
    received,
    secrets: [],
    enqueue: (...r) => void replies.push(...r),
    async waitFor(n, where = () => true, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const matching = received.filter(where);
        if (matching.length >= n) return matching;
        if (Date.now() > deadline) throw new Error(`receiver got ${matching.length} of ${n} webhooks: ${JSON.stringify(received.map((r) => r.payload?.type ?? r.body.slice(0, 80)))}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    release(status = 204) {
      for (const res of held.splice(0)) res.writeHead(status).end();
    },
    async stop() {
      const s = server;
      server = null;
      if (!s) return;
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    },
    async start() {
      const s = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          const payload = verify(body, req.headers, receiver.secrets);
          const entry: ReceivedWebhook = { headers: req.headers, body, verified: payload !== null, payload, answered: null };
          received.push(entry);
          const reply = replies.shift() ?? { status: 204 };
          if ('hold' in reply) held.push(res);
          else {
            entry.answered = reply.status;
            res.writeHead(reply.status, reply.headers).end(reply.body);
          }
        });
      });
      await new Promise<void>((r) => s.listen(boundPort, '127.0.0.1', r));
      boundPort = (s.address() as AddressInfo).port;
      server = s;
    },
  };
  await receiver.start();
  return receiver;
}

function verify(body: string, headers: IncomingHttpHeaders, secrets: readonly string[]): WebhookPayload | null {
  const plain = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
  for (const secret of secrets) {
    try {
      return new Webhook(secret).verify(body, plain) as WebhookPayload;
    } catch {
      // Not this secret.
    }
  }
  return null;
}
