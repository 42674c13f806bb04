import type { Client } from 'graphql-ws';
import { EventPruner } from '../../src/events/event-pruner';
import { TurnEventRepository } from '../../src/events/turn-event.repository';
import { createLogger } from '../../src/logger';
import { createSessionStore, type SessionStore } from '../../src/sessions/session-store';
import { mysqlTestDatabase, sqliteTestDatabase, type TestDatabase, type TestDatabaseFactory } from '../support/db';
import { describeWithMysql } from '../support/services';
import { addTurn, completeTurn } from '../support/turns';
import { subscribe, wsClient } from '../support/ws';
import { alice, startGateway, type TestGateway } from '../support/testkit';

const HOUR = 3_600_000;

function retentionSuite(open: TestDatabaseFactory): void {
  let t: TestDatabase;
  let sessions: SessionStore['lifecycle'];
  let history: TurnEventRepository;
  let clock: Date;
  beforeEach(async () => {
    t = await open();
    clock = new Date('2026-03-01T00:00:00Z');
    sessions = createSessionStore({ db: t.db, events: { turnStatusChanged: () => undefined }, now: () => clock }).lifecycle;
    history = new TurnEventRepository(t.db);
  });
  afterEach(() => t.dispose());

  async function eventsAt(at: Date, count: number, sessionId: string): Promise<void> {
    clock = at;
    for (let i = 0; i < count; i++) await addTurn(sessions, alice, sessionId);
  }

  it('prunes events older than the retention, moves the horizon, and refuses resumes from before it', async () => {
    const session = await sessions.createSession(alice, { name: 'old', agentContextId: 'ac' });
    await eventsAt(new Date('2026-03-01T00:00:00Z'), 3, session.id);
    await eventsAt(new Date('2026-03-04T00:00:00Z'), 2, session.id);
    const pruner = new EventPruner(history, 72, createLogger('silent'), () => new Date('2026-03-04T01:00:00Z'));
    await pruner.runOnce();
    expect(await history.horizon('acme')).toBe(3);
    expect((await history.after({ orgId: 'acme' }, 0, 100)).map((e) => e.eventId)).toEqual([4, 5]);
    await expect(history.assertResumable('acme', 2)).rejects.toMatchObject({ code: 'EVENTS_PRUNED', details: { oldestResumableEventId: '3' } });
    await expect(history.assertResumable('acme', 3)).resolves.toBeUndefined();
    await expect(history.assertResumable('acme', 6)).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    // Running again (or in another instance at the same time) changes nothing.
    await Promise.all([pruner.runOnce(), new EventPruner(history, 72, createLogger('silent'), () => new Date('2026-03-04T01:00:00Z')).runOnce()]);
    expect(await history.horizon('acme')).toBe(3);
    expect(await history.latestId('acme')).toBe(5);
  });

  it('deletes large backlogs in windows and never moves the horizon back', async () => {
    const session = await sessions.createSession(alice, { name: 'many', agentContextId: 'ac' });
    await eventsAt(new Date('2026-03-01T00:00:00Z'), 12, session.id);
    await eventsAt(new Date('2026-03-05T00:00:00Z'), 1, session.id);
    const statements = t.statements.length;
    const windowed = new TurnEventRepository(t.db, 5);
    expect(await windowed.prune(new Date('2026-03-02T00:00:00Z'))).toEqual({ orgs: 1, deleted: 12 });
    expect(t.statements.slice(statements).filter((sql) => /^DELETE FROM/i.test(sql))).toHaveLength(3);
    expect((await history.after({ orgId: 'acme' }, 0, 100)).map((e) => e.eventId)).toEqual([13]);
    expect(await windowed.prune(new Date('2026-02-01T00:00:00Z'))).toEqual({ orgs: 0, deleted: 0 });
  });

  it('lets concurrent pruners and writers run together', async () => {
    const session = await sessions.createSession(alice, { name: 'busy', agentContextId: 'ac' });
    clock = new Date(Date.now() - 100 * HOUR);
    const turn = await addTurn(sessions, alice, session.id);
    await completeTurn(sessions, alice, session.id, turn.id);
    clock = new Date();
    await Promise.all([
      history.prune(new Date(Date.now() - 72 * HOUR)),
      history.prune(new Date(Date.now() - 72 * HOUR)),
      addTurn(sessions, alice, session.id),
    ]);
    expect(await history.horizon('acme')).toBe(2);
    expect((await history.after({ orgId: 'acme' }, 2, 10)).map((e) => e.eventId)).toEqual([3]);
  });
}

describe('event retention on embedded SQLite', () => retentionSuite(sqliteTestDatabase));
describeWithMysql('event retention on MySQL/MariaDB', () => retentionSuite(mysqlTestDatabase));

describe('resuming from before the horizon over WebSocket', () => {
  let t: TestGateway;
  let client: Client;
  beforeAll(async () => {
    t = await startGateway();
    client = wsClient(t.url, t.token({ userId: 'alice' }));
  });
  afterAll(async () => {
    await client.dispose();
    await t.close();
  });

  it('is refused with EVENTS_PRUNED; from the horizon on it replays', async () => {
    const { live } = t.gateway.services;
    const sessions = t.gateway.sessions.lifecycle;
    const session = await sessions.createSession(alice, { name: 'pruned', agentContextId: 'ac' });
    const turn = await addTurn(sessions, alice, session.id);
    await completeTurn(sessions, alice, session.id, turn.id);
    await addTurn(sessions, alice, session.id);
    await new TurnEventRepository(t.gateway.db).prune(new Date(Date.now() + 1000));
    const horizon = await live.history.horizon('acme');
    expect(horizon).toBe(3);
    await addTurn(sessions, alice, session.id);

    const query = 'subscription R($after: ID) { sessionActivity(afterEventId: $after) { eventId sequenceNumber } }';
    const refused = subscribe(client, query, { after: '1' });
    await refused.done;
    expect(refused.results[0]?.errors?.[0]).toMatchObject({
      extensions: { code: 'EVENTS_PRUNED', afterEventId: '1', oldestResumableEventId: '3' },
    });
    const resumed = subscribe<{ sessionActivity: { eventId: string; sequenceNumber: number } }>(client, query, { after: String(horizon) });
    const [first] = await resumed.waitFor(1);
    expect(first?.data?.sessionActivity).toEqual({ eventId: '4', sequenceNumber: 3 });
    resumed.unsubscribe();
  });
});
