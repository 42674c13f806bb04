import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config';
import { ContextDirectory } from '../contexts/context-directory';
import { openGatewayDatabase, type GatewayDatabase } from '../gateway-database';
import { createLogger } from '../logger';
import { createSessionStore } from '../sessions/session-store';
import { bulkSeedSessions, seededSessionId } from './bulk-seed';
import { seedDemoData, type SeedOptions } from './seed-data';

/**
 * `npm run seed -- --org acme --users 1000 --sessions 1000000 [--participants 2-3]
 * [--public-share 0.35] [--deleted-share 0.01] [--turns-for-newest 200] [--turns 5]`: fills
 * the configured database (DATABASE_URL, else the embedded SQLite under DATA_DIR). The newest
 * `--turns-for-newest` sessions are written through the turn lifecycle with `--turns` turns
 * each over the last 30 days, so every invariant holds for them; the rest, a year of history
 * before them, in bulk statements without turns (cli/bulk-seed.ts). Ids are derived from the
 * org and the index: a second run writes nothing twice.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      org: { type: 'string', default: 'acme' },
      'org-name': { type: 'string' },
      users: { type: 'string', default: '8' },
      sessions: { type: 'string', default: '200' },
      turns: { type: 'string', default: '5' },
      'turns-for-newest': { type: 'string', default: '200' },
      participants: { type: 'string', default: '2-3' },
      'public-share': { type: 'string', default: '0.35' },
      'deleted-share': { type: 'string', default: '0.01' },
      seed: { type: 'string', default: '42' },
    },
  });
  const sessionsWanted = positive('sessions', values.sessions, 10_000_000);
  const newest = Math.min(sessionsWanted, whole('turns-for-newest', values['turns-for-newest'], 1_000_000));
  const options: SeedOptions = {
    orgId: values.org,
    orgName: values['org-name'] ?? capitalise(values.org),
    users: positive('users', values.users, 100_000),
    sessions: newest,
    turnsPerSession: positive('turns', values.turns, 1000),
    randomSeed: positive('seed', values.seed, 2 ** 31),
    sessionIdOf: (i) => seededSessionId(values.org, 'newest', i),
  };
  const participants = range('participants', values.participants, options.users);
  const publicShare = share('public-share', values['public-share']);
  const deletedShare = share('deleted-share', values['deleted-share']);
  const config = loadConfig();
  const logger = createLogger('warn');
  const db = await openGatewayDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.dbPoolSize, logger });
  try {
    // Seeded ids derive from the org and the index, so a second run adds only what is missing;
    // an org that has as many sessions already is left alone.
    const had = await db.run((em) => em.count(db.entities.sessions, { where: { orgId: options.orgId } }));
    if (had >= sessionsWanted) {
      console.log(`org ${options.orgId} already has ${had} sessions: nothing seeded (a larger --sessions adds the missing ones; or pick another --org)`);
      console.log(`try: npm run token -- --user user-2 --org ${options.orgId}`);
      return;
    }
    // Nothing listens here; running gateways pick the stored events up from turn_events.
    let now = new Date();
    const { lifecycle: sessions } = createSessionStore({ db, events: { turnStatusChanged: () => undefined }, now: () => now });
    const contexts = new ContextDirectory(db);
    const started = Date.now();
    const clock = { set: (at: Date) => void (now = at) };
    const show = (text: string) => process.stdout.isTTY && process.stdout.write(`\r${text}`);
    const existing = await existingIds(db, Array.from({ length: newest }, (_, i) => seededSessionId(values.org, 'newest', i)));
    const result = await seedDemoData({ sessions, contexts, clock }, { ...options, existing }, (done) => show(`${done}/${newest} newest sessions`));
    const bulk = sessionsWanted - newest;
    // The bulk history ends where the lifecycle's 30 days begin.
    const until = new Date(started - 31 * 24 * 3600 * 1000);
    await bulkSeedSessions(
      db,
      { ...options, sessions: bulk, participants, publicShare, deletedShare, until, agentContextIds: result.agentContextIds, conversationContextIds: result.conversationContextIds },
      (done) => show(`${done}/${bulk} sessions in bulk`),
    );
    if (process.stdout.isTTY) process.stdout.write('\n');
    const where = config.databaseUrl ? db.dialect : `sqlite in ${config.dataDir}`;
    console.log(
      `seeded org ${options.orgId} in ${where}: ${sessionsWanted} sessions, ${result.turns} turns (the newest ${newest} through the ` +
        `lifecycle, ${newest - existing.size} of them now; ${bulk} in bulk; existing ones kept), ${options.users} users (user-1 is an admin), ` +
        `contexts ${result.agentContexts.join(', ')} / ${result.conversationContexts.join(', ')} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    console.log(`try: npm run token -- --user user-2 --org ${options.orgId}`);
  } finally {
    await db.close();
  }
}

/** Which of `ids` are sessions already. */
async function existingIds(db: GatewayDatabase, ids: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    const rows = await db.read<{ id: string }>(`SELECT id FROM agent_sessions WHERE id IN (${chunk.map(() => '?').join(', ')})`, chunk);
    for (const r of rows) found.add(r.id);
  }
  return found;
}

function whole(name: string, raw: string, max: number): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > max) fail(`--${name} must be an integer between 0 and ${max}`);
  return n;
}

function share(name: string, raw: string): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || n > 1) fail(`--${name} must be a number between 0 and 1`);
  return n;
}

/** `2-3` or `2`: participants per session, the owner included; never more than there are users. */
function range(name: string, raw: string, users: number): [number, number] {
  const m = /^(\d+)(?:-(\d+))?$/.exec(raw);
  const min = Number(m?.[1]);
  const max = Number(m?.[2] ?? m?.[1]);
  if (!m || min < 1 || max < min) fail(`--${name} must be N or N-M with 1 <= N <= M`);
  return [Math.min(min, users), Math.min(max, users)];
}

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

function positive(name: string, raw: string, max: number): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max) fail(`--${name} must be an integer between 1 and ${max}`);
  return n;
}

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
