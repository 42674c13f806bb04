import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPool, type RowDataPacket } from 'mysql2/promise';
import { callerCheck, readBody, sendJson, type Caller } from './baseline-http';
import { serveParent, StatementLog } from './bench-child';

/**
 * The hand-written baseline of bench/execute.bench.ts, in its own process: the floor of the
 * execute job on this machine. node:http, a JWT check, and per execute the same durable writes
 * and round trips as the gateway's, with nothing else: read the context (and, on a follow-on,
 * the session) in one round trip; add the turn, its session's count and a status event in one
 * transaction; stream the answer from the provider (node:http, SSE) chained by
 * previous_response_id; settle the turn, the session's totals and a status event in one
 * transaction; answer with the execute's JSON. No GraphQL, no blob store, no limits, no logs.
 * On mysql2 (BENCH_MYSQL_URL, a pool of BENCH_POOL_SIZE, multi-statement batches as the
 * gateway sends) or better-sqlite3 (BENCH_SQLITE_FILE, WAL, synchronous=NORMAL as the
 * gateway's). The provider is PROVIDER_URL (…/v1). POST /context creates a context.
 */
const callerOf = callerCheck(process.env.JWT_SECRET ?? '');

const SCHEMA = [
  'CREATE TABLE bl_contexts (id VARCHAR(36) PRIMARY KEY, org VARCHAR(64) NOT NULL, model VARCHAR(64) NOT NULL)',
  `CREATE TABLE bl_sessions (id VARCHAR(36) PRIMARY KEY, org VARCHAR(64) NOT NULL, user_id VARCHAR(64) NOT NULL, context_id VARCHAR(36) NOT NULL,
     turn_count INT NOT NULL, input_tokens BIGINT NOT NULL DEFAULT 0, output_tokens BIGINT NOT NULL DEFAULT 0,
     last_status VARCHAR(16) NOT NULL, last_response_id VARCHAR(64), updated_at VARCHAR(32) NOT NULL)`,
  `CREATE TABLE bl_turns (id VARCHAR(36) PRIMARY KEY, session_id VARCHAR(36) NOT NULL, turn_number INT NOT NULL, status VARCHAR(16) NOT NULL,
     instruction TEXT NOT NULL, active_files TEXT NOT NULL, output TEXT, response_id VARCHAR(64), input_tokens INT, output_tokens INT,
     created_at VARCHAR(32) NOT NULL, UNIQUE (session_id, turn_number))`,
  'CREATE TABLE bl_events (id INTEGER PRIMARY KEY AUTO_INCREMENT, session_id VARCHAR(36) NOT NULL, turn_id VARCHAR(36) NOT NULL, status VARCHAR(16) NOT NULL, at VARCHAR(32) NOT NULL)',
];

const READ_CONTEXT = 'SELECT model FROM bl_contexts WHERE id = ? AND org = ?';
const READ_SESSION = 'SELECT turn_count, last_response_id FROM bl_sessions WHERE id = ? AND org = ? AND user_id = ?';
const INSERT_SESSION =
  "INSERT INTO bl_sessions (id, org, user_id, context_id, turn_count, last_status, updated_at) VALUES (?, ?, ?, ?, 1, 'PENDING', ?)";
const COUNT_TURN = "UPDATE bl_sessions SET turn_count = turn_count + 1, last_status = 'PENDING', updated_at = ? WHERE id = ? AND turn_count = ?";
const INSERT_TURN =
  "INSERT INTO bl_turns (id, session_id, turn_number, status, instruction, active_files, created_at) VALUES (?, ?, ?, 'PENDING', ?, ?, ?)";
const INSERT_EVENT = 'INSERT INTO bl_events (session_id, turn_id, status, at) VALUES (?, ?, ?, ?)';
const SETTLE_TURN = "UPDATE bl_turns SET status = 'COMPLETED', output = ?, response_id = ?, input_tokens = ?, output_tokens = ? WHERE id = ? AND status = 'PENDING'";
const SETTLE_SESSION =
  "UPDATE bl_sessions SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, last_status = 'COMPLETED', last_response_id = ?, updated_at = ? WHERE id = ?";

interface Input {
  readonly agentContextId: string;
  readonly instruction: string;
  readonly sessionId?: string;
  readonly activeFiles?: readonly { path: string; content: string }[];
}
interface Started {
  readonly model: string;
  readonly sessionId: string;
  readonly turnId: string;
  readonly previousResponseId: string | null;
}
interface Answer {
  readonly text: string;
  readonly responseId: string;
  readonly inputTokens: number;
  readonly outputTokens: number;
}
interface Store {
  createContext(org: string): Promise<string>;
  /** Null: no such context or session for this caller. */
  start(who: Caller, input: Input): Promise<Started | null>;
  settle(started: Started, answer: Answer): Promise<void>;
  close(): Promise<void>;
}

const now = () => new Date().toISOString();

async function mysqlStore(url: string, log: StatementLog): Promise<Store> {
  const pool = createPool({ uri: url, connectionLimit: Number(process.env.BENCH_POOL_SIZE ?? 20), multipleStatements: true });
  await pool.query(SCHEMA.join('; '));
  /** One round trip: `statements` as one multi-statement query; one result per statement when several. */
  const batch = async <T>(statements: readonly string[], params: unknown[]): Promise<T> => {
    const sql = statements.join('; ');
    log.record(sql);
    const [results] = await pool.query(sql, params);
    return results as T;
  };
  const tx = (statements: readonly string[], params: unknown[]) => batch<unknown>(['START TRANSACTION', ...statements, 'COMMIT'], params);
  return {
    async createContext(org) {
      const id = randomUUID();
      await pool.query('INSERT INTO bl_contexts (id, org, model) VALUES (?, ?, ?)', [id, org, 'gpt-4.1-mini']);
      return id;
    },
    async start(who, input) {
      const at = now();
      const turnId = randomUUID();
      const files = JSON.stringify(input.activeFiles ?? []);
      if (!input.sessionId) {
        const [context] = await batch<RowDataPacket[]>([READ_CONTEXT], [input.agentContextId, who.org]);
        const model = context?.model as string | undefined;
        if (!model) return null;
        const sessionId = randomUUID();
        await tx(
          [INSERT_SESSION, INSERT_TURN, INSERT_EVENT],
          [sessionId, who.org, who.user, input.agentContextId, at, turnId, sessionId, 1, input.instruction, files, at, sessionId, turnId, 'PENDING', at],
        );
        return { model, sessionId, turnId, previousResponseId: null };
      }
      const [contexts, sessions] = await batch<RowDataPacket[][]>([READ_CONTEXT, READ_SESSION], [input.agentContextId, who.org, input.sessionId, who.org, who.user]);
      const model = contexts?.[0]?.model as string | undefined;
      const session = sessions?.[0];
      if (!model || !session) return null;
      const count = Number(session.turn_count);
      // The bench sends one request per session at a time: the floor keeps the gateway's guarded
      // count and the turn number's unique key, not its fallback for adds that race.
      await tx(
        [COUNT_TURN, INSERT_TURN, INSERT_EVENT],
        [at, input.sessionId, count, turnId, input.sessionId, count + 1, input.instruction, files, at, input.sessionId, turnId, 'PENDING', at],
      );
      return { model, sessionId: input.sessionId, turnId, previousResponseId: (session.last_response_id as string | null) ?? null };
    },
    async settle(s, a) {
      const at = now();
      await tx(
        [SETTLE_TURN, SETTLE_SESSION, INSERT_EVENT],
        [a.text, a.responseId, a.inputTokens, a.outputTokens, s.turnId, a.inputTokens, a.outputTokens, a.responseId, at, s.sessionId, s.sessionId, s.turnId, 'COMPLETED', at],
      );
    },
    close: () => pool.end(),
  };
}

function sqliteStore(file: string, log: StatementLog): Store {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  for (const ddl of SCHEMA) db.exec(ddl.replace('AUTO_INCREMENT', ''));
  const prepare = (sql: string) => {
    const statement = db.prepare(sql);
    return {
      get: (...params: unknown[]) => (log.record(sql), statement.get(...params) as Record<string, unknown> | undefined),
      run: (...params: unknown[]) => (log.record(sql), statement.run(...params)),
    };
  };
  const readContext = prepare(READ_CONTEXT);
  const readSession = prepare(READ_SESSION);
  const insertSession = prepare(INSERT_SESSION);
  const countTurn = prepare(COUNT_TURN);
  const insertTurn = prepare(INSERT_TURN);
  const insertEvent = prepare(INSERT_EVENT);
  const settleTurn = prepare(SETTLE_TURN);
  const settleSession = prepare(SETTLE_SESSION);
  const insertContext = db.prepare('INSERT INTO bl_contexts (id, org, model) VALUES (?, ?, ?)');
  // better-sqlite3 sends BEGIN and COMMIT itself; they are logged so the bench counts transactions as on MySQL.
  const logged =
    <A extends unknown[], R>(run: (...args: A) => R) =>
    (...args: A): R => {
      log.record('BEGIN');
      const result = run(...args);
      log.record('COMMIT');
      return result;
    };
  const start = db.transaction((who: Caller, input: Input): Started | null => {
    const at = now();
    const turnId = randomUUID();
    const files = JSON.stringify(input.activeFiles ?? []);
    const model = readContext.get(input.agentContextId, who.org)?.model as string | undefined;
    if (!model) return null;
    if (!input.sessionId) {
      const sessionId = randomUUID();
      insertSession.run(sessionId, who.org, who.user, input.agentContextId, at);
      insertTurn.run(turnId, sessionId, 1, input.instruction, files, at);
      insertEvent.run(sessionId, turnId, 'PENDING', at);
      return { model, sessionId, turnId, previousResponseId: null };
    }
    const session = readSession.get(input.sessionId, who.org, who.user);
    if (!session) return null;
    const count = Number(session.turn_count);
    countTurn.run(at, input.sessionId, count);
    insertTurn.run(turnId, input.sessionId, count + 1, input.instruction, files, at);
    insertEvent.run(input.sessionId, turnId, 'PENDING', at);
    return { model, sessionId: input.sessionId, turnId, previousResponseId: (session.last_response_id as string | null) ?? null };
  });
  const settle = db.transaction((s: Started, a: Answer) => {
    const at = now();
    settleTurn.run(a.text, a.responseId, a.inputTokens, a.outputTokens, s.turnId);
    settleSession.run(a.inputTokens, a.outputTokens, a.responseId, at, s.sessionId);
    insertEvent.run(s.sessionId, s.turnId, 'COMPLETED', at);
  });
  return {
    createContext: async (org) => {
      const id = randomUUID();
      insertContext.run(id, org, 'gpt-4.1-mini');
      return id;
    },
    start: async (who, input) => logged(start)(who, input),
    settle: async (s, a) => void logged(settle)(s, a),
    close: async () => void db.close(),
  };
}

/** One streamed Responses API call; the text deltas and the completed response's id and usage. */
function callProvider(agent: Agent, base: URL, started: Started, input: Input): Promise<Answer> {
  const files = (input.activeFiles ?? []).map((f) => `File ${f.path}:\n${f.content}`).join('\n');
  const body = JSON.stringify({
    model: started.model,
    input: [{ role: 'user', content: files ? `${files}\n\n${input.instruction}` : input.instruction }],
    stream: true,
    store: true,
    ...(started.previousResponseId ? { previous_response_id: started.previousResponseId } : {}),
  });
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(`${base.pathname.replace(/\/$/, '')}/responses`, base),
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: 'Bearer sk-bench' } },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`provider: HTTP ${res.statusCode}`));
        res.setEncoding('utf8');
        let buffered = '';
        let text = '';
        res.on('data', (chunk: string) => {
          buffered += chunk;
          let end: number;
          while ((end = buffered.indexOf('\n\n')) >= 0) {
            const data = /^data: (.*)$/m.exec(buffered.slice(0, end))?.[1];
            buffered = buffered.slice(end + 2);
            if (!data) continue;
            const event = JSON.parse(data) as { type: string; delta?: string; response?: { id: string; usage: { input_tokens: number; output_tokens: number } } };
            if (event.type === 'response.output_text.delta') text += event.delta ?? '';
            else if (event.type === 'response.completed' && event.response)
              resolve({ text, responseId: event.response.id, inputTokens: event.response.usage.input_tokens, outputTokens: event.response.usage.output_tokens });
          }
        });
        res.on('end', () => reject(new Error('provider: stream ended without response.completed')));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function main(): Promise<void> {
  const log = new StatementLog();
  const mysqlUrl = process.env.BENCH_MYSQL_URL;
  const store = mysqlUrl ? await mysqlStore(mysqlUrl, log) : sqliteStore(process.env.BENCH_SQLITE_FILE ?? '', log);
  const provider = new URL(process.env.PROVIDER_URL ?? '');
  const agent = new Agent({ keepAlive: true });
  const server = createServer((req, res) => {
    void (async () => {
      const body = (await readBody(req)) as { variables?: { input?: Input } };
      const who = callerOf(req);
      if (!who) return sendJson(res, 401, '{"errors":[{"message":"unauthenticated"}]}');
      if (req.url === '/context') return sendJson(res, 200, JSON.stringify({ id: await store.createContext(who.org) }));
      const input = body.variables?.input;
      if (!input) return sendJson(res, 400, '{"errors":[{"message":"no input"}]}');
      const started = await store.start(who, input);
      if (!started) return sendJson(res, 200, '{"errors":[{"message":"not found"}]}');
      const answer = await callProvider(agent, provider, started, input);
      await store.settle(started, answer);
      sendJson(
        res,
        200,
        JSON.stringify({
          data: {
            execute: { sessionId: started.sessionId, turnId: started.turnId, primaryOutputText: answer.text, usage: { totalTokens: answer.inputTokens + answer.outputTokens } },
          },
        }),
      );
    })().catch((e: unknown) => sendJson(res, 500, JSON.stringify({ errors: [{ message: String(e) }] })));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  serveParent(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, log, async () => {
    await new Promise<void>((r) => server.close(() => r()));
    agent.destroy();
    await store.close();
  });
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
