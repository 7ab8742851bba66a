// What ACP connections hold for clients that have not taken it, over all connections, against a
// real daemon (--acp-unsent-total-mb). Each connection holds up to 2 × maxBufferedBytes (128 MiB)
// before its own limit closes it, and 256 connections could hold 32 GiB: until 2026-12-06 nothing
// bounded them together. Here a connection holds a turn's output by never opening its session's
// stream (no socket buffer takes any of it, so what it holds is exact), and a second does the same.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Daemon, tempDir, waitFor } from '../../support/daemon.js';
import { rawInitialize, rawPost, SseReader, type Harness } from '../../support/transport/harness.js';

const MiB = 1024 * 1024;
const CHUNK = 256 * 1024;
const CHUNKS = 6;
/** What one held turn is at least: its chunks' text (each update's JSON is a little more). */
const TURN_BYTES = CHUNKS * CHUNK;
const script = { replies: [{ when: 'bulky', items: Array.from({ length: CHUNKS }, (_, i) => ({ text: `${i} `.padEnd(CHUNK, 'x') })) }, { when: 'hello', items: [{ text: 'ok' }] }] };

/** The raw transport helpers, pointed at the daemon. */
function rawClient(d: Daemon): Harness {
  return { fetch: (path: string, init: RequestInit = {}) => fetch(d.url + path, { ...init, headers: { ...d.headers, ...(init.headers as Record<string, string>) } }) } as unknown as Harness;
}

/** An HTTP connection whose session ran a bulky turn that nobody reads: its session stream is never opened. */
async function heldTurn(t: { after(f: () => unknown): void }, h: Harness): Promise<{ conn: string; main: SseReader; sessionId: string }> {
  const conn = await rawInitialize(h);
  const main = await SseReader.open(h, conn);
  t.after(() => main.close());
  assert.equal((await rawPost(h, conn, { jsonrpc: '2.0', id: 100, method: 'session/new', params: { cwd: tempDir(), mcpServers: [] } })).status, 202);
  await main.waitUntil(() => main.events.some((e) => e.json['id'] === 100));
  const sessionId = (main.events.find((e) => e.json['id'] === 100)!.json['result'] as { sessionId: string }).sessionId;
  assert.equal((await rawPost(h, conn, { jsonrpc: '2.0', id: 1, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'bulky' }] } }, sessionId)).status, 202);
  return { conn, main, sessionId };
}

/** Waits until the session's turn is in its log, started and completed (its output went to its connection before). */
async function turnCompleted(d: Daemon, sessionId: string): Promise<void> {
  await waitFor('the turn to complete', async () => {
    const { json } = await d.api('GET', `/v1/sessions/${sessionId}`);
    return json.lastSeq >= CHUNKS + 2 && json.turnId === undefined;
  });
}

test('all connections together hold at most --acp-unsent-total-mb of unsent output: over it the one holding most is closed (limit_exceeded), the others are served', async (t) => {
  // 2 MiB holds one held turn (about 1.5 MiB) but not two.
  const budget = 2 * MiB;
  const d = await Daemon.start({ script, args: ['--acp-unsent-total-mb', '2'] });
  t.after(() => d.stop());
  const h = rawClient(d);
  const a = await heldTurn(t, h);
  await waitFor('the first connection to hold its turn', async () => (await d.metric('troupe_acp_unsent_bytes')) >= TURN_BYTES);
  const b = await heldTurn(t, h);
  await turnCompleted(d, b.sessionId);
  // Both turns' output went to their connections: without the budget the daemon would hold about 3 MiB.
  const unsent = await waitFor('the second connection to hold its turn', async () => {
    const n = await d.metric('troupe_acp_unsent_bytes');
    return n >= TURN_BYTES && n;
  });
  assert.ok(unsent <= budget, `the connections hold ${unsent} bytes unsent`);
  // The first, holding most when the second went over, was closed: its stream ended, it is unknown now.
  await waitFor('the first connection to be closed', () => a.main.ended);
  assert.equal((await rawPost(h, a.conn, { jsonrpc: '2.0', id: 2, method: 'session/prompt', params: { sessionId: a.sessionId, prompt: [{ type: 'text', text: 'hello' }] } }, a.sessionId)).status, 404);
  assert.match(d.stderr, /maxBufferedTotalBytes/);
  assert.match(d.stderr, /limit_exceeded/);
  // Another client, over WebSocket, is served meanwhile.
  const other = d.connect('ws');
  t.after(() => other.close());
  await other.init();
  const otherSession = (await other.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })).sessionId;
  assert.equal((await other.agent.request('session/prompt', { sessionId: otherSession, prompt: [{ type: 'text', text: 'hello' }] })).stopReason, 'end_turn');
  // The second lost nothing: its session's stream delivers the whole turn, then the answer.
  const s = await SseReader.open(h, b.conn, { sessionId: b.sessionId });
  t.after(() => s.close());
  await s.waitUntil(() => s.events.some((e) => e.json['id'] === 1));
  assert.equal(s.events.filter((e) => (e.json['params'] as { update?: { sessionUpdate?: string } })?.update?.sessionUpdate === 'agent_message_chunk').length, CHUNKS);
  assert.equal((s.events.find((e) => e.json['id'] === 1)!.json['result'] as { stopReason: string }).stopReason, 'end_turn');
  await waitFor('its output to be taken', async () => (await d.metric('troupe_acp_unsent_bytes')) < CHUNK);
});

test('--acp-unsent-total-mb takes whole MiB from 1', async () => {
  const { spawnSync } = await import('node:child_process');
  for (const bad of ['0', '1.5', 'x']) {
    const r = spawnSync(process.execPath, ['bin/troupe.js', 'serve', '--port', '0', '--acp-unsent-total-mb', bad], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', TROUPE_HOME: '/nonexistent/never-made' } });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /--acp-unsent-total-mb must be an integer from 1 to/);
  }
});
