import { createSessionStore } from '../../src/sessions/session-store';
import { TurnProvenance } from '../../src/sessions/turn-provenance';
import { mysqlTestDatabase, sqliteTestDatabase, type TestDatabaseFactory } from '../support/db';
import { describeWithMysql } from '../support/services';
import { alice } from '../support/testkit/users';

function backfillSuite(open: TestDatabaseFactory): void {
  it('indexes the refs of turns that existed before the provenance migration', async () => {
    const t = await open();
    try {
      const sessions = createSessionStore({ db: t.db, events: { turnStatusChanged: () => undefined } }).lifecycle;
      const provenance = new TurnProvenance(t.db);
      const session = await sessions.createSession(alice, { name: 's', agentContextId: 'ac' });
      const chunk = { chunkId: 'chunk-1', path: 'a.ts', startLine: 1, endLine: 9, contentHash: 'c1', score: 0.5, fileContentHash: 'file-a' };
      const older = await sessions.addTurn(alice, session.id, {
        instructionSummary: 'older',
        chunkRefs: [chunk, chunk],
        activeFileRefs: [{ path: 'b.ts', contentHash: 'file-b', sizeBytes: 3, isTouched: true, wasSentToLLM: true, wasTooLargeToSend: false }],
      });
      await sessions.failTurn(alice, session.id, older.id, { errors: ['x'] });
      await new Promise((r) => setTimeout(r, 5));
      await sessions.addTurn(alice, session.id, { instructionSummary: 'newer', chunkRefs: [{ ...chunk, fileContentHash: 'o'.repeat(129) }] });
      const page = { first: 10, after: null };
      const read = async () => ({
        chunk: (await provenance.turnsUsingChunk(alice, 'chunk-1', page)).items.map((x) => x.instructionSummary),
        fileA: (await provenance.turnsUsingFile(alice, 'file-a', page)).items.map((x) => x.instructionSummary),
        fileB: (await provenance.turnsUsingFile(alice, 'file-b', page)).items.map((x) => x.instructionSummary),
      });
      const before = await read();
      expect(before).toEqual({ chunk: ['newer', 'older'], fileA: ['older'], fileB: ['older'] });

      // Back to the schema before provenance, then forward again: the index is rebuilt from the turns.
      const all = t.db.dataSource.migrations;
      const later = all.length - all.findIndex((m) => m.name === 'TurnProvenance1764200000000');
      for (let i = 0; i < later; i++) await t.db.dataSource.undoLastMigration();
      const runner = t.db.dataSource.createQueryRunner();
      expect(await runner.hasTable('turn_chunk_refs')).toBe(false);
      await runner.release();
      await t.db.dataSource.runMigrations();
      expect(await read()).toEqual(before);
    } finally {
      await t.dispose();
    }
  });
}

describe('provenance backfill on embedded SQLite', () => backfillSuite(sqliteTestDatabase));
describeWithMysql('provenance backfill on MySQL/MariaDB', () => backfillSuite(mysqlTestDatabase));
