import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { createGateway, type Gateway } from '../../src/main';

/** One GET /healthz on `socket` (kept alive); resolves with the status line. */
function get(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (d: Buffer) => {
      text += String(d);
      if (text.includes('\r\n\r\n') && text.includes('"status"')) {
        socket.off('data', onData);
        resolve(text.split('\r\n')[0]!);
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write('GET /healthz HTTP/1.1\r\nHost: gateway\r\nConnection: keep-alive\r\n\r\n');
  });
}

describe('idle keep-alive connections (HTTP_KEEPALIVE_TIMEOUT_MS)', () => {
  let gateway: Gateway;
  let port: number;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'gw-keepalive-'));
    gateway = await createGateway(loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, HTTP_KEEPALIVE_TIMEOUT_MS: '2000' }), createLogger('silent'));
    port = Number(new URL(await gateway.listen()).port);
  });
  afterAll(async () => {
    await gateway.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('stay open for the configured time, not Node’s 5 s default, and are closed by the gateway after it', async () => {
    const socket = connect(port, '127.0.0.1');
    const closed = new Promise<number>((r) => socket.once('close', () => r(Date.now())));
    expect(await get(socket)).toBe('HTTP/1.1 200 OK');
    await new Promise((r) => setTimeout(r, 1000));
    expect(await get(socket)).toBe('HTTP/1.1 200 OK');
    const lastAnswer = Date.now();
    const at = await closed;
    expect(at - lastAnswer).toBeGreaterThanOrEqual(1500);
    expect(at - lastAnswer).toBeLessThan(4500);
  });

  it('default to longer than the proxies in front keep an idle connection (HAProxy 15 s and 60 s, load balancers 60 s)', () => {
    expect(loadConfig({}).httpKeepAliveTimeoutMs).toBeGreaterThan(60_000);
  });
});
