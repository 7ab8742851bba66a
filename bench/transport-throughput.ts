/**
 * Transport benchmark: an SDK HTTP client receives a `session/load` replay of N `session/update`s
 * (a) from troupe's uWS transport and (b) from the SDK's own AcpServer on node:http, the baseline
 * measured in the same run. Both agents await every send. Also a WebSocket pass for each.
 * Run: `npm run build && node dist/bench/transport-throughput.js`.
 * Writes bench/results/transport-throughput.json. Bounded to well under a minute.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { cpus } from 'node:os';
import * as acp from '@agentclientprotocol/sdk';
import { createHttpStream } from '@agentclientprotocol/sdk/experimental/http-client';
import { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } from '@agentclientprotocol/sdk/experimental/node';
import { AcpServer } from '@agentclientprotocol/sdk/experimental/server';
import { createWebSocketStream } from '@agentclientprotocol/sdk/experimental/ws-client';
import { WebSocket, WebSocketServer } from 'ws';
import { HttpServer } from '../src/daemon/http/http-server.js';
import { TestAgent } from '../test/support/transport/test-agent.js';

const UPDATES = Number(process.env.BENCH_UPDATES ?? 20_000);
const RUNS = 3;
const TOKEN = 'bench-token-0123456789abcdef';
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The SDK baseline agent: the same replay as the TestAgent, through the SDK app API. */
function sdkAgent(): acp.AgentApp {
  return acp
    .agent({ name: 'bench' })
    .onRequest('initialize', () => ({ protocolVersion: 1, agentCapabilities: { loadSession: true }, authMethods: [] }))
    .onRequest('session/load', async ({ params, client }) => {
      for (let i = 1; i <= UPDATES; i++) {
        await client.notify('session/update', { sessionId: params.sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `replay ${i}` } } });
      }
    });
}

/** Time until the client has all N updates and the load resolved. */
async function loadOnce(stream: acp.Stream): Promise<number> {
  let seen = 0;
  let allSeen!: () => void;
  const done = new Promise<void>((r) => (allSeen = r));
  const app = acp.client().onNotification('session/update', () => {
    if (++seen === UPDATES) allSeen();
  });
  const t0 = performance.now();
  await app.connectWith(stream, async (agent) => {
    await agent.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    await agent.request('session/load', { sessionId: 'ses_bench', cwd: '/tmp', mcpServers: [], _meta: { replay: UPDATES } } as never);
    await done;
  });
  return performance.now() - t0;
}

async function main(): Promise<void> {
  const troupe = new HttpServer({ token: TOKEN });
  troupe.mountAcp(new TestAgent({ loadReplay: UPDATES }));
  const info = await troupe.listen();

  const sdkServer = new AcpServer({ createAgent: sdkAgent });
  const wss = new WebSocketServer({ noServer: true });
  const node: Server = createServer(createNodeHttpHandler(sdkServer));
  node.on('upgrade', createNodeWebSocketUpgradeHandler(sdkServer, wss));
  await new Promise<void>((r) => node.listen(0, '127.0.0.1', r));
  const sdkPort = (node.address() as { port: number }).port;

  const headers = { Authorization: `Bearer ${TOKEN}` };
  const cases = {
    troupeHttp: () => createHttpStream(`${info.url}/acp`, { headers }),
    sdkHttp: () => createHttpStream(`http://127.0.0.1:${sdkPort}/acp`),
    troupeWs: () => createWebSocketStream(`${info.url.replace('http', 'ws')}/acp`, { WebSocket: WebSocket as never, headers }),
    sdkWs: () => createWebSocketStream(`ws://127.0.0.1:${sdkPort}/acp`, { WebSocket: WebSocket as never }),
  };
  const ms: Record<string, number[]> = {};
  for (let run = 0; run < RUNS; run++) {
    for (const [name, make] of Object.entries(cases)) (ms[name] ??= []).push(await loadOnce(make()));
  }
  const med = Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, median(v)]));
  const result = {
    bench: 'transport-throughput',
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    updates: UPDATES,
    runs: RUNS,
    medianMs: med,
    updatesPerSecond: Object.fromEntries(Object.entries(med).map(([k, v]) => [k, Math.round(UPDATES / (v / 1000))])),
    // > 1 means troupe is faster than the SDK server on the same workload, measured in this run.
    speedupVsSdk: { http: med['sdkHttp']! / med['troupeHttp']!, ws: med['sdkWs']! / med['troupeWs']! },
  };
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/transport-throughput.json', JSON.stringify(result, null, 2) + '\n');
  console.log(JSON.stringify(result, null, 2));
  await troupe.close();
  await sdkServer.close();
  node.closeAllConnections();
  node.close();
}

await main();
