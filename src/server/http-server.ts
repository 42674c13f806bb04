import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HttpServerConfig } from '../config';

/**
 * How often node:http looks for connections past their headers or request timeout: its
 * default (30 s) would let a 10 s headers timeout run to 40 s. Each look walks only the
 * connections with a request in progress.
 */
const TIMEOUT_CHECK_MS = 1_000;

/**
 * The gateway's HTTP server, with its clocks for slow clients (issue 36): the headers must
 * arrive within HTTP_HEADERS_TIMEOUT_MS and the whole request (a body that trickles) within
 * HTTP_REQUEST_TIMEOUT_MS, else node:http answers 408 and closes. Neither bounds an answer
 * (an event stream, a synchronous execute) nor a WebSocket after its upgrade: those follow
 * their own keep-alive rules. Idle keep-alive connections last HTTP_KEEPALIVE_TIMEOUT_MS,
 * longer than a proxy in front keeps them for reuse, so the proxy never sends a request on a
 * connection the gateway is closing (deploy/haproxy/haproxy.cfg).
 */
export function createHttpServer(http: HttpServerConfig, keepAliveTimeoutMs: number): Server {
  return createServer({
    headersTimeout: http.headersTimeoutMs,
    requestTimeout: http.requestTimeoutMs,
    keepAliveTimeout: keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_MS, http.headersTimeoutMs),
  });
}

/** Connections the kernel may hold for the gateway to accept (a burst of 2,000 executes). */
const LISTEN_BACKLOG = 4096;

/** Listens on host:port (port 0 picks a free one) and returns the URL a client on this machine uses. */
export function listenOn(server: Server, host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    // Node's default backlog (511) drops the SYNs of a burst of connections beyond it; their
    // clients retry after 1, 3, 7, 15 s... (the kernel caps this at net.core.somaxconn).
    server.listen({ port, host, backlog: LISTEN_BACKLOG }, () => {
      const { port: bound } = server.address() as AddressInfo;
      const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
      resolve(`http://${reachable}:${bound}`);
    });
  });
}
