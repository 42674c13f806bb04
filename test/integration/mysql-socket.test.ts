import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openGatewayDatabase } from '../../src/gateway-database';
import { createLogger } from '../../src/logger';
import { createSessionStore } from '../../src/sessions/session-store';
import { createMysqlDatabase, dropMysqlDatabase } from '../support/db';
import { describeWithMysqlSocket, mysqlSocket, mysqlUrl } from '../support/services';
import { alice } from '../support/testkit';

/** How the server sees this connection: `localhost` for its Unix socket, `host:port` over TCP. */
const HOST_OF_THIS_CONNECTION = 'SELECT HOST AS host FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()';

describeWithMysqlSocket('DATABASE_URL with ?socketPath= (a co-located MySQL/MariaDB)', () => {
  it('runs every connection of the gateway, pool and transactions alike, over the Unix socket', async () => {
    const url = new URL(await createMysqlDatabase());
    url.searchParams.set('socketPath', mysqlSocket!);
    // Host and port are ignored once a socket is named: an address nothing listens on proves it.
    url.hostname = '192.0.2.1';
    url.port = '1';
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-socket-'));
    const db = await openGatewayDatabase({ databaseUrl: url.toString(), dataDir, poolSize: 2, logger: createLogger('silent'), connectTimeoutMs: 2000 });
    try {
      const [read] = await db.read<{ host: string }>(HOST_OF_THIS_CONNECTION);
      const [inTransaction] = await db.sqlTransaction((tx) => tx.rows<{ host: string }>(HOST_OF_THIS_CONNECTION));
      expect([read?.host, inTransaction?.host]).toEqual(['localhost', 'localhost']);
      const store = createSessionStore({ db, events: { turnStatusChanged: () => {} } });
      const session = await store.lifecycle.createSession(alice, { name: 'Over the socket', agentContextId: 'ac-1' });
      await store.lifecycle.addTurn(alice, session.id, { instructionSummary: 'hello' }, { seen: (await store.reads.getSession(alice, session.id))! });
      expect((await store.reads.getSession(alice, session.id))?.turnCount).toBe(1);
    } finally {
      await db.close();
      url.searchParams.delete('socketPath');
      await dropMysqlDatabase(url.toString().replace('192.0.2.1:1', new URL(mysqlUrl!).host));
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
