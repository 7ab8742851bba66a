// /metrics counts the bytes of the daemon's traffic: what each ACP transport received and sent
// (troupe_acp_bytes_total) and what the other routes did (troupe_management_bytes_total). Raw clients
// count every body byte they exchange; the daemon's counters must come to exactly the same.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { Daemon, waitFor } from '../../support/daemon.js';

const SCRIPT = { replies: [[{ text: 'counted to the byte — ünïcödé too' }]] };

/** One labelled series of /metrics, and the scrape's own body (the next scrape counts it as sent). */
async function series(d: Daemon, name: string, labels: string): Promise<{ value: number; body: string }> {
  const body = await (await fetch(`${d.url}/metrics`, { headers: d.headers })).text();
  const m = new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(body);
  if (!m) throw new Error(`${name}{${labels}} is not in /metrics`);
  return { value: Number(m[1]), body };
}

const acpBytes = async (d: Daemon, transport: string, direction: string) => (await series(d, 'troupe_acp_bytes_total', `direction="${direction}",transport="${transport}"`)).value;

test('WebSocket: the frames the client sent and received, to the byte', async (t) => {
  const d = await Daemon.start({ script: SCRIPT });
  t.after(() => d.stop());
  const ws = new WebSocket(d.url.replace(/^http/, 'ws') + '/acp', ['acp', `troupe-token.${d.token}`]);
  t.after(() => ws.close());
  let sent = 0;
  let received = 0;
  const answers = new Map<number, unknown>();
  ws.on('message', (data: Buffer) => {
    received += data.length;
    const msg = JSON.parse(data.toString('utf8'));
    if (msg.id !== undefined && !msg.method) answers.set(msg.id, msg.result ?? msg.error);
  });
  await new Promise((r) => ws.once('open', r));
  const request = async (id: number, method: string, params: unknown) => {
    const text = JSON.stringify({ jsonrpc: '2.0', id, method, params });
    sent += Buffer.byteLength(text);
    ws.send(text);
    return waitFor(`the answer to ${method}`, () => answers.get(id) as any);
  };
  await request(1, 'initialize', { protocolVersion: 1, clientCapabilities: {} });
  const { sessionId } = await request(2, 'session/new', { cwd: mkdtempSync(join(tmpdir(), 'troupe-ws-')), mcpServers: [] });
  assert.equal((await request(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'count me — ✓' }] })).stopReason, 'end_turn');
  assert.equal(await acpBytes(d, 'ws', 'received'), sent);
  // Updates may still follow the answer: the counter and the client meet once they are all read.
  await waitFor('the sent counter to equal what the client received', async () => (await acpBytes(d, 'ws', 'sent')) === received);
  assert.equal(await acpBytes(d, 'http', 'sent'), 0, 'nothing was counted for the other transport');
});

test('HTTP: POST bodies received, the initialize answer and both SSE streams sent, to the byte', async (t) => {
  const d = await Daemon.start({ script: SCRIPT });
  t.after(() => d.stop());
  const acp = `${d.url}/acp`;
  let posted = 0;
  let read = 0;
  const answers = new Map<number, any>();
  const post = async (body: unknown, headers: Record<string, string> = {}) => {
    const text = JSON.stringify(body);
    posted += Buffer.byteLength(text);
    const res = await fetch(acp, { method: 'POST', headers: { ...d.headers, 'content-type': 'application/json', ...headers }, body: text });
    const answer = Buffer.from(await res.arrayBuffer());
    read += answer.length;
    return { res, answer };
  };
  const controller = new AbortController();
  t.after(() => controller.abort());
  /** Reads an SSE stream to the end, counting its bytes and keeping the answers it carries. */
  const listen = async (headers: Record<string, string>) => {
    const res = await fetch(acp, { headers: { ...d.headers, accept: 'text/event-stream', ...headers }, signal: controller.signal });
    assert.equal(res.status, 200);
    void (async () => {
      let text = '';
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          read += chunk.length;
          text += Buffer.from(chunk).toString('utf8');
          for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n')) {
            const data = /^data: (.*)$/m.exec(text.slice(0, end));
            text = text.slice(end + 2);
            const msg = data && JSON.parse(data[1]!);
            if (msg && msg.id !== undefined && !msg.method) answers.set(msg.id, msg.result ?? msg.error);
          }
        }
      } catch {
        // aborted at the end of the test
      }
    })();
  };
  const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } });
  const connectionId = init.res.headers.get('acp-connection-id')!;
  await listen({ 'acp-connection-id': connectionId });
  await post({ jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: mkdtempSync(join(tmpdir(), 'troupe-http-')), mcpServers: [] } }, { 'acp-connection-id': connectionId });
  const { sessionId } = await waitFor('the session/new answer', () => answers.get(2));
  await listen({ 'acp-connection-id': connectionId, 'acp-session-id': sessionId });
  await post({ jsonrpc: '2.0', id: 3, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'count me — ✓' }] } }, { 'acp-connection-id': connectionId, 'acp-session-id': sessionId });
  assert.equal((await waitFor('the prompt answer', () => answers.get(3))).stopReason, 'end_turn');
  assert.equal(await acpBytes(d, 'http', 'received'), posted);
  await waitFor('the sent counter to equal what the client read', async () => (await acpBytes(d, 'http', 'sent')) === read);
  assert.equal(await acpBytes(d, 'ws', 'received'), 0);
});

test('the other routes: a management answer and the scrapes themselves, to the byte', async (t) => {
  const d = await Daemon.start({ script: SCRIPT });
  t.after(() => d.stop());
  const first = await series(d, 'troupe_management_bytes_total', 'direction="sent"');
  const sessions = Buffer.from(await (await fetch(`${d.url}/v1/sessions`, { headers: d.headers })).arrayBuffer());
  const created = JSON.stringify({ sessionId: 'nope' });
  const refused = await fetch(`${d.url}/v1/sessions/nope/steer`, { method: 'POST', headers: { ...d.headers, 'content-type': 'application/json' }, body: created });
  const refusal = Buffer.from(await refused.arrayBuffer());
  const received = await series(d, 'troupe_management_bytes_total', 'direction="received"');
  assert.equal(received.value, Buffer.byteLength(created));
  const then = await series(d, 'troupe_management_bytes_total', 'direction="sent"');
  // Each scrape's body is counted once it is sent: the first two by the third.
  assert.equal(then.value, first.value + Buffer.byteLength(first.body) + sessions.length + refusal.length + Buffer.byteLength(received.body));
});
