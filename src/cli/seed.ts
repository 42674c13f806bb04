import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config';
import { ContextDirectory } from '../contexts/context-directory';
import { openGatewayDatabase } from '../gateway-database';
import { createLogger } from '../logger';
import { createSessionStore } from '../sessions/session-store';
import { seedDemoData, type SeedOptions } from './seed-data';

/**
 * `npm run seed -- --org acme --users 8 --sessions 200 --turns 5`: fills the configured
 * database (DATABASE_URL, else the embedded SQLite under DATA_DIR) through the turn
 * lifecycle, so every invariant holds for the demo data too.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      org: { type: 'string', default: 'acme' },
      'org-name': { type: 'string' },
      users: { type: 'string', default: '8' },
      sessions: { type: 'string', default: '200' },
      turns: { type: 'string', default: '5' },
      seed: { type: 'string', default: '42' },
    },
  });
  const options: SeedOptions = {
    orgId: values.org,
    orgName: values['org-name'] ?? capitalise(values.org),
    users: positive('users', values.users, 1000),
    sessions: positive('sessions', values.sessions, 1_000_000),
    turnsPerSession: positive('turns', values.turns, 1000),
    randomSeed: positive('seed', values.seed, 2 ** 31),
  };
  const config = loadConfig();
  const logger = createLogger('warn');
  const db = await openGatewayDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.dbPoolSize, logger });
  try {
    // Demo data goes into an empty organisation only, so running seed twice doubles nothing.
    const existing = await db.dataSource.manager.count(db.entities.sessions, { where: { orgId: options.orgId } });
    if (existing > 0) {
      console.log(`org ${options.orgId} already has ${existing} sessions: nothing seeded (seed fills an organisation without sessions; pick another --org for more)`);
      console.log(`try: npm run token -- --user user-2 --org ${options.orgId}`);
      return;
    }
    // Nothing listens here; running gateways pick the stored events up from turn_events.
    let now = new Date();
    const { lifecycle: sessions } = createSessionStore({ db, events: { turnStatusChanged: () => undefined }, now: () => now });
    const contexts = new ContextDirectory(db);
    const started = Date.now();
    const clock = { set: (at: Date) => void (now = at) };
    const result = await seedDemoData({ sessions, contexts, clock }, options, (done) => {
      if (process.stdout.isTTY) process.stdout.write(`\r${done}/${options.sessions} sessions`);
    });
    if (process.stdout.isTTY) process.stdout.write('\n');
    const where = config.databaseUrl ? db.dialect : `sqlite in ${config.dataDir}`;
    console.log(
      `seeded org ${options.orgId} in ${where}: ${result.sessions} sessions, ${result.turns} turns, ` +
        `${options.users} users (user-1 is an admin), contexts ${result.agentContexts.join(', ')} / ` +
        `${result.conversationContexts.join(', ')} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    console.log(`try: npm run token -- --user user-2 --org ${options.orgId}`);
  } finally {
    await db.close();
  }
}

function positive(name: string, raw: string, max: number): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max) {
    console.error(`--${name} must be an integer between 1 and ${max}`);
    process.exit(2);
  }
  return n;
}

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
