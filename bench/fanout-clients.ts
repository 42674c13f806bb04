import { fork, type ChildProcess } from 'node:child_process';
import { isAbsolute, join } from 'node:path';
import WebSocket from 'ws';

/** Client side of bench/fanout.bench.ts: the server processes it drives and the subscribing sockets. */

export const STATUS_QUERY = `subscription W($sessionId: ID!, $after: ID) {
  turnStatusChanged(sessionId: $sessionId, afterEventId: $after) {
    eventId sequenceNumber previousStatus status statusTimeStamp createdByUser { id text }
    turn { id status sequenceNumber instructionSummary }
    session { id name turnCount lastTurnStatus ownerUser { id text } }
  }
}`;
const OUTPUT_QUERY = `subscription O($sessionId: ID!, $turnId: ID!) { turnOutput(sessionId: $sessionId, turnId: $turnId) { index textDelta } }`;

export interface ServerStats extends Record<string, unknown> {
  rss: number;
  /** V8's used heap after a GC: the JS part of the RSS, steadier than it. */
  heapUsed: number;
  subscribers: number;
  connections: number;
  executions: number;
  serialisations: number;
  slowConsumersDropped: number;
}

/** A server child process (the gateway's fanout-server.js or the bare baseline) driven over IPC. */
export class ServerProcess {
  private next = 1;
  private readonly pending = new Map<number, (reply: Record<string, unknown>) => void>();
  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
  ) {
    child.on('message', (m: Record<string, unknown>) => this.pending.get(m.id as number)?.(m));
  }

  static start(script: string, env: Record<string, string>): Promise<ServerProcess> {
    const child = fork(isAbsolute(script) ? script : join(__dirname, script), [], {
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'error', ...env },
      // BENCH_CHILD_FLAGS as in bench-child.ts (docs/performance.md: every process a bench starts).
      execArgv: [...(process.env.BENCH_CHILD_FLAGS?.split(' ').filter(Boolean) ?? []), '--expose-gc'],
    });
    return new Promise((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`bench server ${script} exited with ${code}`)));
      child.once('message', (m: { url: string }) => resolve(new ServerProcess(child, m.url)));
    });
  }

  ask<T extends Record<string, unknown>>(command: Record<string, unknown>): Promise<T> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, (reply) => {
        this.pending.delete(id);
        if (reply.error) reject(new Error(JSON.stringify(reply.error)));
        else resolve(reply as T);
      });
      this.child.send({ ...command, id });
    });
  }

  stats(): Promise<ServerStats> {
    return this.ask<ServerStats>({ type: 'stats' });
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null) return resolve();
      this.child.once('exit', () => resolve());
      this.child.kill('SIGTERM');
    });
  }
}

/** Receipt times (hrtime ns) per turn sequence number, over all fast sockets, and each sequence's event id. */
export class Receipts {
  readonly bySequence = new Map<number, bigint[]>();
  readonly eventIds = new Map<number, number>();
  record(sequence: number, eventId: number, at: bigint): void {
    let list = this.bySequence.get(sequence);
    if (!list) {
      this.bySequence.set(sequence, (list = []));
      this.eventIds.set(sequence, eventId);
    }
    list.push(at);
  }
  count(sequence: number): number {
    return this.bySequence.get(sequence)?.length ?? 0;
  }
}

const wsUrl = (httpUrl: string) => `${httpUrl.replace(/^http/, 'ws')}/graphql`;
const SEQUENCE = /"eventId":"(\d+)","sequenceNumber":(\d+)/;

/** Opens a socket, authenticates and subscribes to the session's status feed as operation "1"; resolves once acknowledged. */
export function fastSubscriber(url: string, token: string, sessionId: string, receipts: Receipts): Promise<WebSocket> {
  return open(url, token, (ws) => subscribeStatus(ws, sessionId, null), (text, at) => {
    // Cheaper than JSON.parse on 10,000 sockets: the event id and sequence number are all we need.
    const match = SEQUENCE.exec(text);
    if (match) receipts.record(Number(match[2]), Number(match[1]), at);
  });
}

const ACTIVITY_QUERY = `subscription A($filter: AgentSessionFilter) { sessionActivity(filter: $filter) { eventId sequenceNumber status session { id name } } }`;

/** One user's sessionActivity feeds, one per filter, `perSocket` operations to a socket; resolves once all are sent. */
export async function filteredFeeds(url: string, token: string, filters: readonly Record<string, unknown>[], perSocket: number): Promise<WebSocket[]> {
  const sockets: WebSocket[] = [];
  for (let i = 0; i < filters.length; i += perSocket) {
    const batch = filters.slice(i, i + perSocket);
    sockets.push(
      await open(
        url,
        token,
        (ws) => batch.forEach((filter, j) => ws.send(JSON.stringify({ id: `f${i + j}`, type: 'subscribe', payload: { query: ACTIVITY_QUERY, variables: { filter } } }))),
        () => undefined,
      ),
    );
  }
  return sockets;
}

/**
 * A client that follows the session's status feed AND a busy turn's output, then stops
 * reading: the server has to bound what it keeps for it and drop it. After the run it reads
 * again (what was sent before the drop, then the close frame) and resumes with afterEventId.
 */
export class SlowReader {
  closeCode: number | null = null;
  private constructor(
    private readonly ws: WebSocket,
    /** Status event ids received, in order. */
    readonly eventIds: number[],
  ) {
    ws.once('close', (code) => (this.closeCode = code));
    ws.pause();
  }

  static async connect(url: string, token: string, sessionId: string, busy: { sessionId: string; turnId: string }): Promise<SlowReader> {
    const eventIds: number[] = [];
    const ws = await open(
      url,
      token,
      (socket) => {
        subscribeStatus(socket, sessionId, null);
        socket.send(JSON.stringify({ id: '2', type: 'subscribe', payload: { query: OUTPUT_QUERY, variables: busy } }));
      },
      (text) => {
        const match = SEQUENCE.exec(text);
        if (match) eventIds.push(Number(match[1]));
      },
    );
    return new SlowReader(ws, eventIds);
  }

  /** Reads again; resolves with the close code once the server's close frame arrives. */
  async drain(timeoutMs: number): Promise<number> {
    this.ws.resume();
    await waitFor(() => this.closeCode !== null, timeoutMs, 'a slow reader to see its close frame');
    return this.closeCode as number;
  }

  /** Subscribes again from the last event id it saw; resolves once `through` has arrived. */
  async resume(url: string, token: string, sessionId: string, from: number, through: number, timeoutMs: number): Promise<void> {
    const after = this.eventIds.at(-1) ?? from;
    const ws = await open(url, token, (socket) => subscribeStatus(socket, sessionId, String(after)), (text) => {
      const match = SEQUENCE.exec(text);
      if (match) this.eventIds.push(Number(match[1]));
    });
    try {
      await waitFor(() => (this.eventIds.at(-1) ?? 0) >= through, timeoutMs, 'a resumed reader to catch up');
    } finally {
      ws.terminate();
    }
  }

  terminate(): void {
    this.ws.terminate();
  }
}

function subscribeStatus(ws: WebSocket, sessionId: string, after: string | null): void {
  ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: STATUS_QUERY, variables: { sessionId, after } } }));
}

function open(url: string, token: string, onAck: (ws: WebSocket) => void, onNext: (text: string, at: bigint) => void): Promise<WebSocket> {
  const ws = new WebSocket(wsUrl(url), 'graphql-transport-ws');
  return new Promise((resolve, reject) => {
    ws.once('error', reject);
    ws.once('close', (code) => reject(new Error(`closed with ${code} before the acknowledgement`)));
    ws.once('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } })));
    ws.on('message', (data) => {
      const at = process.hrtime.bigint();
      const text = (data as Buffer).toString('utf8');
      if (text.startsWith('{"id"')) return onNext(text, at);
      if (text.includes('"connection_ack"')) {
        onAck(ws);
        resolve(ws);
      }
    });
  });
}

export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
