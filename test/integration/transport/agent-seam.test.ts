// The seam to the relay: initialize failures, raw JSON passed through untouched, agent-side close,
// and backpressure on send().
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { WebSocket } from 'ws';
import { HttpServer } from '../../../src/daemon/http/http-server.js';
import type { AcpAgentSide, AcpClientChannel, AcpCloseReason } from '../../../src/daemon/http/acp/acp.types.js';
import { rawInitialize, rawPost, SseReader, startHarness, TOKEN, type Harness } from '../../support/transport/harness.js';

const init = (id: unknown = 0) => JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: 1 } });

describe('initialize failures', { timeout: 20_000 }, () => {
  let server: HttpServer;
  let url: string;
  const closed: AcpCloseReason[] = [];
  before(async () => {
    const agent: AcpAgentSide = {
      async open(_channel, request) {
        const params = request['params'] as { protocolVersion: number };
        if (params.protocolVersion === 99) throw new Error('no such version');
        // A wrong id: not the response to this initialize.
        return { initializeResponse: { jsonrpc: '2.0', id: 'other', result: {} }, receive: () => undefined, closed: (r) => closed.push(r) };
      },
    };
    server = new HttpServer({ token: TOKEN });
    server.mountAcp(agent);
    url = (await server.listen()).url;
  });
  after(() => server.close());

  const post = (body: string) => fetch(`${url}/acp`, { method: 'POST', headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' }, body });

  test('HTTP: a throwing agent or a mismatched response is 500 with -32603 and no connection', async () => {
    for (const version of [99, 1]) {
      const res = await post(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'initialize', params: { protocolVersion: version } }));
      assert.equal(res.status, 500);
      assert.equal(res.headers.get('acp-connection-id'), null);
      const body = (await res.json()) as { id: number; error: { code: number; message: string } };
      assert.equal(body.id, 4);
      assert.equal(body.error.code, -32603);
      assert.equal(body.error.message, 'Initialize failed');
    }
    assert.deepEqual(closed, ['protocol_error'], 'the peer with the bad response was told');
  });

  test('WS: the failure is a -32603 frame and close 1011', async () => {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/acp`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    await once(ws, 'open');
    const closedP = once(ws, 'close');
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 99 } }));
    const [frame] = await once(ws, 'message');
    assert.equal(JSON.parse(String(frame)).error.code, -32603);
    const [code] = await closedP;
    assert.equal(code, 1011);
  });
});

describe('seam behaviour', { timeout: 20_000 }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  test('messages pass through raw: unknown fields and extension methods survive both ways', async () => {
    const conn = await rawInitialize(h);
    const stream = await SseReader.open(h, conn);
    const odd = { jsonrpc: '2.0', id: 'e1', method: '_test/echo', params: { nested: { keep: [1, 'two', null] }, _meta: { x: 1 } }, extraTopLevel: true };
    assert.equal((await rawPost(h, conn, odd)).status, 202);
    const received = h.agent.connection(conn).received.at(-1)!.message;
    assert.deepEqual(received, odd, 'the agent side sees the exact object, extra fields included');
    const [ev] = await stream.waitFor(1);
    assert.deepEqual((ev!.json['result'] as { params: unknown }).params, odd.params);
    // An agent-side message with fields no schema knows reaches the client as sent.
    await h.agent.connection(conn).channel.send({ jsonrpc: '2.0', method: '_vendor/thing', params: { a: 1 }, vendorField: 'kept' });
    const events = await stream.waitFor(2);
    assert.deepEqual(events[1]!.json, { jsonrpc: '2.0', method: '_vendor/thing', params: { a: 1 }, vendorField: 'kept' });
    stream.close();
  });

  test('the agent side can close a connection: HTTP streams end, WS closes 1000', async () => {
    const conn = await rawInitialize(h);
    const stream = await SseReader.open(h, conn);
    h.agent.connection(conn).channel.close();
    await stream.waitEnd();
    assert.equal(await h.agent.connection(conn).closed, 'agent_closed');
    assert.equal((await rawPost(h, conn, { jsonrpc: '2.0', method: 'x' })).status, 404);

    const ws = new WebSocket(h.acpUrl.replace(/^http/, 'ws'), { headers: { Authorization: `Bearer ${TOKEN}` } });
    await once(ws, 'open');
    ws.send(init());
    await once(ws, 'message');
    const rec = h.agent.connections.at(-1)!;
    const closing = once(ws, 'close');
    rec.channel.close();
    const [code] = await closing;
    assert.equal(code, 1000);
    assert.equal(rec.channel.isClosed, true);
  });

  test('send() waits while the client is behind and resolves once it reads', async () => {
    const small = await startHarness({ acp: { maxBufferedBytes: 1000 } });
    try {
      const conn = await rawInitialize(small);
      const channel: AcpClientChannel = small.agent.connection(conn).channel;
      let resolved = false;
      // No receiver yet: 2 KB of output cannot be taken.
      const sent = channel.send({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's1', pad: 'x'.repeat(2000) } }).then(() => (resolved = true));
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(resolved, false, 'send is held while the output waits');
      const stream = await SseReader.open(small, conn, { sessionId: 's1' });
      await sent;
      assert.equal(resolved, true);
      const [ev] = await stream.waitFor(1);
      assert.equal(ev!.json['method'], 'session/update');
      stream.close();
    } finally {
      await small.close();
    }
  });
});
