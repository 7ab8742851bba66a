// A client that never reads (bounded memory, closed after the stall timeout), reaping of abandoned
// HTTP connections, WebSocket pings, and the WebSocket protocol rules (first frame, ids, batches).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { WebSocket } from 'ws';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { delay, rawInitialize, rawPost, SseReader, stalledSseSocket, startHarness, TOKEN, until, type Harness } from '../../support/transport/harness.js';

const MAX_BUFFERED = 64 * 1024;

/** A WebSocket on the harness's /acp, authorized, opened. */
async function openWs(h: Harness): Promise<WebSocket> {
  const ws = new WebSocket(h.acpUrl.replace(/^http/, 'ws'), { headers: { Authorization: `Bearer ${TOKEN}` } });
  await once(ws, 'open');
  return ws;
}

/** An opened WebSocket that has been answered its `initialize`, with the answer's text. */
async function initializedWs(h: Harness): Promise<{ ws: WebSocket; answer: string }> {
  const ws = await openWs(h);
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1 } }));
  const [data] = (await once(ws, 'message')) as [Buffer];
  return { ws, answer: data.toString() };
}
const MESSAGE = 16 * 1024;

describe('a client that never reads its stream', { timeout: 20_000 }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ acp: { maxBufferedBytes: MAX_BUFFERED, maxOutputStallMs: 300 } });
  });
  after(() => h.close());

  test('server-side buffering stays under the limit and the connection closes after the stall timeout', async () => {
    const conn = await rawInitialize(h);
    const socket = await stalledSseSocket(h, conn, 'flood');
    const res = await rawPost(h, conn, { jsonrpc: '2.0', id: 1, method: '_test/flood', params: { sessionId: 'flood', size: MESSAGE } }, 'flood');
    assert.equal(res.status, 202);
    const record = h.agent.connection(conn);
    assert.equal(await record.closed, 'stalled');
    const stats = h.acp.connections().find((c) => c.id === conn);
    assert.equal(stats, undefined, 'the connection left the registry');
    // The agent was held back by backpressure: it produced a bounded amount, not its 1e6 messages.
    assert.ok(record.floodSent < 10_000, `flood sent ${record.floodSent}`);
    assert.equal((await rawPost(h, conn, { jsonrpc: '2.0', id: 2, method: 'session/new', params: {} })).status, 404);
    socket.destroy();
  });

  test('peak pending bytes never exceed maxBufferedBytes plus one message', async () => {
    const conn = await rawInitialize(h);
    const socket = await stalledSseSocket(h, conn, 'flood');
    await rawPost(h, conn, { jsonrpc: '2.0', id: 1, method: '_test/flood', params: { sessionId: 'flood', size: MESSAGE } }, 'flood');
    let peak = 0;
    while (!h.agent.connection(conn).closedReason) {
      const s = h.acp.connections().find((c) => c.id === conn);
      if (s) peak = Math.max(peak, s.peakPendingBytes);
      await delay(10);
    }
    assert.ok(peak >= MAX_BUFFERED, `the buffer did fill (${peak})`);
    assert.ok(peak < MAX_BUFFERED + MESSAGE + 512, `peak ${peak}`);
    socket.destroy();
  });
});

describe('an HTTP client that reads nothing and keeps sending requests', { timeout: 20_000 }, () => {
  let h: Harness;
  // The stall timer is far off: only the bound on held requests stops them piling up.
  before(async () => {
    h = await startHarness({ acp: { maxBufferedBytes: MAX_BUFFERED, maxOutputStallMs: 600_000 } });
  });
  after(() => h.close());

  // Each request waits for room with its body, until the client reads: until 2026-12-07 any number
  // of them could wait (each up to maxBodyBytes, 16 MiB), a WebSocket's frames being bounded already.
  test('has its requests held up to maxBufferedBytes of bodies, and the next one refused at once with capacity_exceeded', async () => {
    const conn = await rawInitialize(h);
    const socket = await stalledSseSocket(h, conn, 'flood');
    await rawPost(h, conn, { jsonrpc: '2.0', id: 1, method: '_test/flood', params: { sessionId: 'flood', size: MESSAGE } }, 'flood');
    // The flood stops once the socket's kernel buffers are full too and the output is over the limit.
    let sent = -1;
    while (sent !== h.agent.connection(conn).floodSent) {
      sent = h.agent.connection(conn).floodSent;
      await delay(200);
    }
    const echo = (id: number) => ({ jsonrpc: '2.0', id, method: '_test/echo', params: { pad: 'p'.repeat(20 * 1024) } });
    // Three bodies of some 20 KiB fit in 64 KiB: held, not answered.
    const held = [2, 3, 4].map((id) => rawPost(h, conn, echo(id)).then((r) => ({ id, status: r.status })));
    const settled = await Promise.race([Promise.any(held).then(() => 'answered'), delay(300).then(() => 'waiting')]);
    assert.equal(settled, 'waiting', 'the held requests wait for room');
    const refused = await rawPost(h, conn, echo(5));
    assert.equal(refused.status, 503);
    const body = (await refused.json()) as { id: number; error: { code: number; data: { code: string } } };
    assert.deepEqual([body.id, body.error.code, body.error.data.code], [5, -32052, 'capacity_exceeded']);
    assert.ok(h.acp.connections().some((c) => c.id === conn), 'the connection still serves');
    socket.destroy();
  });
});

describe('a WebSocket client that stops reading', { timeout: 20_000 }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ acp: { maxBufferedBytes: MAX_BUFFERED, maxOutputStallMs: 300 } });
  });
  after(() => h.close());

  test('its output stays bounded and the socket is closed after the stall timeout', async () => {
    const { ws } = await initializedWs(h);
    const record = h.agent.connections.at(-1)!;
    ws.pause();
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: '_test/flood', params: { sessionId: 'flood', size: MESSAGE } }));
    let peak = 0;
    while (!record.closedReason) {
      const s = h.acp.connections().find((c) => c.id === record.channel.id);
      if (s) peak = Math.max(peak, s.peakPendingBytes);
      await delay(10);
    }
    assert.equal(record.closedReason, 'stalled');
    assert.ok(peak < MAX_BUFFERED + MESSAGE + 512, `peak ${peak}`);
    assert.ok(record.floodSent < 10_000, `flood sent ${record.floodSent}`);
    ws.terminate();
  });
});

describe('a client that stops reading with less than maxBufferedBytes waiting', { timeout: 20_000 }, () => {
  // Until 2026-12-06 a connection was stalled only once over maxBufferedBytes: one that stopped
  // reading with less waiting (here 25.6 MB under a 64 MiB limit, more than the sockets' kernel
  // buffers hold) kept its connection, and every answer queued behind that output, for ever.
  const COUNT = 400;
  const BIG = 64 * 1024;
  let h: Harness;
  before(async () => {
    h = await startHarness({ acp: { maxBufferedBytes: 64 * 1024 * 1024, maxOutputStallMs: 300 } });
  });
  after(() => h.close());

  test('WebSocket: the socket that took nothing for the stall timeout is closed, stalled', async () => {
    const { ws } = await initializedWs(h);
    const record = h.agent.connections.at(-1)!;
    ws.pause();
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: '_test/flood', params: { sessionId: 'flood', size: BIG, count: COUNT } }));
    assert.equal(await record.closed, 'stalled');
    assert.ok(record.floodSent <= COUNT);
    ws.terminate();
  });

  test('SSE: the stream whose socket took nothing for the stall timeout closes its connection, stalled', async () => {
    const conn = await rawInitialize(h);
    const socket = await stalledSseSocket(h, conn, 'flood');
    assert.equal((await rawPost(h, conn, { jsonrpc: '2.0', id: 1, method: '_test/flood', params: { sessionId: 'flood', size: BIG, count: COUNT } }, 'flood')).status, 202);
    assert.equal(await h.agent.connection(conn).closed, 'stalled');
    socket.destroy();
  });
});

describe('reaping and pings', { timeout: 20_000 }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ acp: { idleTimeoutMs: 150, wsPingIntervalMs: 60, wsPongTimeoutMs: 120 } });
  });
  after(() => h.close());

  test('an abandoned HTTP connection is reaped as if DELETEd; one with an open stream is kept', async () => {
    const abandoned = await rawInitialize(h);
    const kept = await rawInitialize(h);
    const stream = await SseReader.open(h, kept);
    assert.equal(await h.agent.connection(abandoned).closed, 'idle');
    assert.equal((await rawPost(h, abandoned, { jsonrpc: '2.0', id: 1, method: 'session/new', params: {} })).status, 404);
    await delay(450);
    assert.equal(h.agent.connection(kept).closedReason, undefined);
    assert.equal((await rawPost(h, kept, { jsonrpc: '2.0', id: 1, method: 'session/new', params: { cwd: '/tmp', mcpServers: [] } })).status, 202);
    const [ev] = await stream.waitFor(1);
    assert.equal(ev!.json['id'], 1);
    stream.close();
  });

  test('server pings keep a live WebSocket open; a peer that stops answering is closed', async () => {
    const url = h.acpUrl.replace(/^http/, 'ws');
    const live = new WebSocket(url, { headers: { Authorization: `Bearer ${TOKEN}` } });
    let pings = 0;
    live.on('ping', () => pings++);
    await once(live, 'open');
    live.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1 } }));
    await once(live, 'message');
    while (pings < 4) await once(live, 'ping');
    assert.equal(live.readyState, WebSocket.OPEN);
    live.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'session/new', params: { cwd: '/tmp', mcpServers: [] } }));
    const [reply] = await once(live, 'message');
    assert.equal(JSON.parse(String(reply)).id, 1);

    const deaf = new WebSocket(url, { headers: { Authorization: `Bearer ${TOKEN}` }, autoPong: false });
    await once(deaf, 'open');
    deaf.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1 } }));
    await once(deaf, 'message');
    const [code] = await once(deaf, 'close');
    assert.equal(code, 1001);
    assert.equal(h.agent.connections.at(-1)!.closedReason, 'idle');
    assert.equal(live.readyState, WebSocket.OPEN, 'the answering socket is still open');
    live.close();
  });
});

describe('a pong that arrived while the server was kept from its loop', { timeout: 20_000 }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ acp: { wsPingIntervalMs: 100, wsPongTimeoutMs: 200 } });
  });
  after(() => h.close());

  // The client runs in a worker thread: it answers the ping while this thread (the server's) is busy
  // past the pong timeout. The pong is then in the socket, unread, when the server's timers run.
  const CLIENT = `
const { parentPort, workerData } = require('node:worker_threads');
const { WebSocket } = require(workerData.ws);
const flags = new Int32Array(workerData.flags);
const ws = new WebSocket(workerData.url, { headers: { Authorization: 'Bearer ' + workerData.token }, autoPong: false });
ws.on('open', () => ws.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1 } })));
ws.once('message', () => parentPort.postMessage('ready'));
ws.once('ping', () => {
  Atomics.store(flags, 0, 1); // pinged
  Atomics.wait(flags, 1, 0, 10000); // until the server thread is busy
  ws.pong('', true, () => Atomics.store(flags, 2, 1)); // the pong is on its way
  ws.on('ping', () => ws.pong());
});
ws.on('close', (code) => parentPort.postMessage('closed ' + code));
`;

  test('is read before the server judges the socket silent: the connection stays open', async (t) => {
    const flags = new Int32Array(new SharedArrayBuffer(12));
    const url = h.acpUrl.replace(/^http/, 'ws');
    const worker = new Worker(CLIENT, { eval: true, workerData: { url, token: TOKEN, flags: flags.buffer, ws: createRequire(import.meta.url).resolve('ws') } });
    t.after(() => worker.terminate());
    const said: string[] = [];
    worker.on('message', (m) => said.push(String(m)));
    while (!said.includes('ready')) await delay(5);
    // Between two loop turns (a check-phase callback), once the client was pinged: busy until its
    // pong is written, then past the pong timeout.
    await new Promise<void>((resolve) => {
      const spin = () => {
        if (Atomics.load(flags, 0) === 0) return void setImmediate(spin);
        Atomics.store(flags, 1, 1);
        Atomics.notify(flags, 1);
        const from = Date.now();
        while (Atomics.load(flags, 2) === 0 && Date.now() - from < 10_000) {
          // the client's pong is being written
        }
        while (Date.now() - from < 2 * h.acp.options.wsPongTimeoutMs) {
          // busy, as a daemon its children keep from a core
        }
        resolve();
      };
      setImmediate(spin);
    });
    assert.equal(Atomics.load(flags, 2), 1, 'the client answered the ping while the server was busy');
    await delay(300);
    assert.deepEqual(said.filter((m) => m.startsWith('closed')), [], 'the socket was not closed as silent');
    assert.equal(h.agent.connections.at(-1)!.closedReason, undefined);
  });
});

describe('uninitialized sockets', { timeout: 20_000 }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ acp: { idleTimeoutMs: 150, maxConnections: 1 } });
  });
  after(() => h.close());

  test('a WebSocket that never sends initialize gives its slot back after idleTimeoutMs', async () => {
    const url = h.acpUrl.replace(/^http/, 'ws');
    const silent = new WebSocket(url, { headers: { Authorization: `Bearer ${TOKEN}` } });
    await once(silent, 'open');
    const [code] = await once(silent, 'close');
    assert.equal(code, 1001);
    const next = new WebSocket(url, { headers: { Authorization: `Bearer ${TOKEN}` } });
    await once(next, 'open');
    next.close();
  });
});

describe('WebSocket protocol rules', { timeout: 20_000 }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ acp: { maxIdLength: 32 } });
  });
  after(() => h.close());

  const next = async (ws: WebSocket): Promise<Record<string, unknown>> => JSON.parse(String((await once(ws, 'message'))[0]));

  test('the first frame must be initialize (else 1002)', async () => {
    const ws = await openWs(h);
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'session/new', params: {} }));
    const [code] = await once(ws, 'close');
    assert.equal(code, 1002);
  });

  test('bad frames get JSON-RPC errors; repeated initialize -32600; long ids close 1008', async () => {
    const ws = await openWs(h);
    ws.send('{oops');
    assert.equal(((await next(ws))['error'] as { code: number }).code, -32700);
    ws.send('[1,2]');
    assert.equal(((await next(ws))['error'] as { code: number }).code, -32600);
    ws.send(Buffer.from('{"binary":true}'), { binary: true });
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1 } }));
    const init = await next(ws);
    assert.equal(init['id'], 0, 'the binary frame was ignored, initialize answered first');
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1 } }));
    const again = await next(ws);
    assert.equal(again['id'], 1);
    assert.equal((again['error'] as { code: number }).code, -32600);
    ws.send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"x":${'['.repeat(1000)}${']'.repeat(1000)}}}`);
    const deep = await next(ws);
    assert.deepEqual([deep['id'], (deep['error'] as { code: number }).code], [null, -32600], 'nested deeper than 256 levels');
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'x'.repeat(33), method: 'session/new', params: {} }));
    const [code] = await once(ws, 'close');
    assert.equal(code, 1008);
  });

  test('session/load over WS keeps its replay before the response', async () => {
    const ws = await openWs(h);
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1 } }));
    await next(ws);
    const frames: Array<Record<string, unknown>> = [];
    ws.on('message', (d) => frames.push(JSON.parse(String(d))));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'session/load', params: { sessionId: 'ses_w', cwd: '/tmp', mcpServers: [], _meta: { replay: 200 } } }));
    while (!frames.some((f) => f['id'] === 5)) await once(ws, 'message');
    assert.equal(frames.length, 201);
    assert.equal(frames.at(-1)!['id'], 5);
    ws.close();
  });
});

describe('WebSocket capacity', { timeout: 20_000 }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ acp: { maxConnections: 1 } });
  });
  after(() => h.close());

  test('an upgrade past maxConnections gets 503 capacity_exceeded', async () => {
    const first = new WebSocket(h.acpUrl.replace(/^http/, 'ws'), { headers: { Authorization: `Bearer ${TOKEN}` } });
    await once(first, 'open');
    const second = new WebSocket(h.acpUrl.replace(/^http/, 'ws'), { headers: { Authorization: `Bearer ${TOKEN}` } });
    second.on('error', () => undefined);
    const [, res] = await once(second, 'unexpected-response');
    assert.equal(res.statusCode, 503);
    let body = '';
    for await (const chunk of res) body += chunk;
    assert.equal(JSON.parse(body).error.data.code, 'capacity_exceeded');
    first.close();
  });
});

describe('a WebSocket client that floods pings and reads nothing', { timeout: 30_000 }, () => {
  let h: Harness;
  // The stall timer and the server's own pings are far off: only maxBufferedBytes can stop the flood.
  before(async () => {
    h = await startHarness({ acp: { maxBufferedBytes: MAX_BUFFERED, maxOutputStallMs: 600_000, wsPingIntervalMs: 200_000, wsPongTimeoutMs: 200_000 } });
  });
  after(() => h.close());

  // uWS answers every ping with a pong, kept in the socket's send buffer while the client reads
  // nothing; before the fix that buffer grew without bound (up to uWS's 1 GiB maxBackpressure).
  test('is closed with limit_exceeded once the pongs it did not read pass maxBufferedBytes', async () => {
    const { ws } = await initializedWs(h);
    const record = h.agent.connections.at(-1)!;
    ws.pause();
    const payload = Buffer.alloc(125, 0x61);
    // 64 MiB of pongs: far past the limit plus every kernel buffer between the two sockets.
    const pings = (64 * 1024 * 1024) / 127;
    for (let sent = 0; sent < pings && !record.closedReason; sent += 1000) {
      for (let i = 0; i < 1000; i++) ws.ping(payload);
      if (ws.bufferedAmount > 1024 * 1024) await delay(1);
      else await delay(0);
    }
    await until(() => record.closedReason !== undefined, 'the server to close the flooding socket', 5000).catch(() => undefined);
    assert.equal(record.closedReason, 'limit_exceeded');
    ws.terminate();
  });
});

describe('a WebSocket client that sends frames that are not JSON before initialize and reads nothing', { timeout: 30_000 }, () => {
  let h: Harness;
  // The stall timer and the wait for initialize are far off: only maxBufferedBytes can stop the flood.
  before(async () => {
    h = await startHarness({ acp: { maxBufferedBytes: MAX_BUFFERED, maxOutputStallMs: 600_000, idleTimeoutMs: 600_000 } });
  });
  after(() => h.close());

  // Each such frame is answered -32700 (about 100 bytes for a 1-byte frame). Before initialize those
  // answers went straight to the socket, past every limit, until the stall timer.
  test('is closed with limit_exceeded once its unread answers pass maxBufferedBytes', async () => {
    const ws = new WebSocket(h.acpUrl.replace(/^http/, 'ws'), { headers: { Authorization: `Bearer ${TOKEN}` } });
    // 'open' follows 'upgrade' in the same turn: wait for both together.
    const upgraded = once(ws, 'upgrade') as Promise<[{ headers: Record<string, string> }]>;
    await once(ws, 'open');
    const id = (await upgraded)[0].headers['acp-connection-id']!;
    ws.pause();
    const live = (): boolean => h.acp.connections().some((c) => c.id === id);
    assert.ok(live());
    // 32 MiB of answers: far past the limit plus every kernel buffer between the two sockets.
    const frames = (32 * 1024 * 1024) / 100;
    for (let sent = 0; sent < frames && live(); sent += 1000) {
      for (let i = 0; i < 1000; i++) ws.send('x');
      await delay(ws.bufferedAmount > 1024 * 1024 ? 1 : 0);
    }
    await until(() => !live(), 'the server to close the flooding socket', 5000).catch(() => undefined);
    assert.equal(live(), false, 'the connection was closed');
    assert.ok(h.logs.some((l) => l.msg.includes('maxBufferedBytes')), 'closed for the output limit');
    ws.terminate();
  });
});

describe('a WebSocket ping interval longer than uWS allows its own idle timer', { timeout: 30_000 }, () => {
  // uWS's backstop idle timer was set to twice interval + pong timeout: over 960 s, uWS aborted the
  // whole process (SIGABRT, "idleTimeout must not be greater than 960 seconds!") as the route mounted.
  test('still serves: the backstop is capped, and troupe\'s own pinger keeps the interval asked for', async () => {
    const h = await startHarness({ acp: { wsPingIntervalMs: 600_000, wsPongTimeoutMs: 15_000 } });
    try {
      const { ws, answer } = await initializedWs(h);
      assert.equal((JSON.parse(answer) as { result?: { protocolVersion?: number } }).result?.protocolVersion, 1);
      ws.close();
    } finally {
      await h.close();
    }
  });
});
