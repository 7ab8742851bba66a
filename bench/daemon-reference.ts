/**
 * The reference server of the daemon benchmark, run as its own process: the SDK's `AcpServer`
 * (`experimental/server` + `createNodeHttpHandler` / `createNodeWebSocketUpgradeHandler` on
 * node:http and `ws`) hosting the troupe agent app in-process, one `SessionHost` per connection as
 * `troupe acp` has one per stdio connection, all sharing one session index (as the daemon has one):
 * a hundred hosts each writing the index file under its lock timed out waiting for it. Same
 * sessions, same engine and log, no child processes.
 * `GET /health` answers at once (the event-loop probe); `POST /gc` runs a full garbage collection
 * (the process runs with --expose-gc), so that memory read before and after a series compares live
 * memory, as the daemon's is read after a GC. Prints `{"url", "pid"}` on stdout when ready.
 * Environment: TROUPE_HOME etc. as for `troupe acp`; BENCH_REF_HOSTS hosts opened ahead (a host
 * opens asynchronously, `createAgent` is synchronous).
 */
import { createServer } from 'node:http';
import * as acp from '@agentclientprotocol/sdk';
import { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } from '@agentclientprotocol/sdk/experimental/node';
import { AcpServer } from '@agentclientprotocol/sdk/experimental/server';
import { WebSocketServer } from 'ws';
import { createStderrLogger, logLevelFrom } from '../src/core/stderr-logger.js';
import { loadConfig } from '../src/providers/config.js';
import { resolveTroupeHome, SessionIndex, sessionsDir } from '../src/store/index.js';
import { createAgentApp } from '../src/acp/agent.app.js';
import { SessionHost } from '../src/acp/session-host.js';

const env = process.env;
const logger = createStderrLogger('bench reference', logLevelFrom(env));
const config = loadConfig(env);
const home = resolveTroupeHome(env);
const ahead = Number(env.BENCH_REF_HOSTS ?? 64);

const index = await SessionIndex.open(sessionsDir(home), { logger });
const openHost = () => SessionHost.open({ home, env, config, logger, index });
const hosts: SessionHost[] = [];
for (let i = 0; i < ahead; i++) hosts.push(await openHost());
let refilling = false;
/** Keeps hosts ready for `createAgent`; one refill loop at a time. */
const refill = () => {
  if (refilling) return;
  refilling = true;
  void (async () => {
    while (hosts.length < ahead) hosts.push(await openHost());
  })()
    // A host that cannot open now is opened on demand later.
    .catch((err) => logger.warn('could not open a host ahead', { error: String(err) }))
    .finally(() => (refilling = false));
};

const server = new AcpServer({
  createAgent: (): acp.AgentApp => {
    const ready = hosts.shift();
    refill();
    // More connections at once than hosts opened ahead: this one opens its own (slower, and said so).
    if (!ready) logger.warn(`more than ${ahead} connections at once: a host is opened on demand; raise BENCH_REF_HOSTS`);
    let host: Promise<SessionHost> | undefined;
    const hostOf = () => (host ??= ready ? Promise.resolve(ready) : openHost());
    // A host serves one connection: its sessions' logs close with it, as they do when a `troupe acp`
    // exits (left open, each file handle waited for the collector, which warned about it).
    return createAgentApp({ openHost: hostOf, env, config, logger }).onConnect((connection) => {
      void connection.closed
        .then(() => (ready || host ? hostOf().then((h) => h.shutdown()) : undefined))
        .catch((err) => logger.warn('could not shut a host down', { error: String(err) }));
    });
  },
});
const acpHandler = createNodeHttpHandler(server);
const wss = new WebSocketServer({ noServer: true });
const node = createServer((req, res) => {
  if (req.url === '/health') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true }));
    return;
  }
  if (req.url === '/gc' && req.method === 'POST') {
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    res.writeHead(gc ? 204 : 501).end();
    return;
  }
  acpHandler(req, res);
});
node.on('upgrade', createNodeWebSocketUpgradeHandler(server, wss));
node.keepAliveTimeout = 60_000;
await new Promise<void>((r) => node.listen(0, '127.0.0.1', r));
const port = (node.address() as { port: number }).port;
process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${port}`, pid: process.pid }) + '\n');

const stop = async () => {
  await server.close().catch(() => undefined);
  node.closeAllConnections();
  node.close();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
