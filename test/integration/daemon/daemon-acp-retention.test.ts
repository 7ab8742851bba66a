// What the ACP transport keeps for `Last-Event-ID` resume, against a real daemon, with budgets small
// enough for a test: per connection (--acp-retain-mb) and over all connections
// (--acp-retain-total-mb). Each stream keeps up to 8 MiB, but one connection may have 1024 session
// streams: until 2026-12-06 nothing bounded them together, 8 GiB per connection. Raw HTTP clients
// (the SDK's client has no resume), as in test/integration/transport/resume.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Daemon, tempDir } from '../../support/daemon.js';
import { rawInitialize, rawPost, SseReader, type Harness } from '../../support/transport/harness.js';

const MiB = 1024 * 1024;
/** A turn of 6 chunks of 100 KB: about 600 KB delivered, and kept, on its session's stream. */
const CHUNKS = 6;
const script = { replies: [{ when: 'bulky', items: Array.from({ length: CHUNKS }, (_, i) => ({ text: `${i} `.padEnd(100 * 1024, 'x') })) }, { when: 'hello', items: [{ text: 'ok' }] }, { when: 'hang', items: [{ text: 'hanging' }, { hang: true }] }] };

/** The raw transport helpers, pointed at the daemon. */
function rawClient(d: Daemon): Harness {
  return { fetch: (path: string, init: RequestInit = {}) => fetch(d.url + path, { ...init, headers: { ...d.headers, ...(init.headers as Record<string, string>) } }) } as unknown as Harness;
}

async function start(t: { after(f: () => unknown): void }, args: string[]): Promise<Daemon> {
  const d = await Daemon.start({ script, args });
  t.after(() => d.stop());
  return d;
}

/** One HTTP connection with `sessions` sessions, each of which ran one bulky turn, read to its end. */
async function connectionWithTurns(t: { after(f: () => unknown): void }, h: Harness, sessions: number): Promise<{ conn: string; sessionIds: string[] }> {
  const conn = await rawInitialize(h);
  const main = await SseReader.open(h, conn);
  t.after(() => main.close());
  const sessionIds: string[] = [];
  for (let i = 0; i < sessions; i++) {
    const id = 100 + i;
    assert.equal((await rawPost(h, conn, { jsonrpc: '2.0', id, method: 'session/new', params: { cwd: tempDir(), mcpServers: [] } })).status, 202);
    await main.waitUntil(() => main.events.some((e) => e.json['id'] === id));
    sessionIds.push((main.events.find((e) => e.json['id'] === id)!.json['result'] as { sessionId: string }).sessionId);
  }
  for (const [i, sessionId] of sessionIds.entries()) {
    const s = await SseReader.open(h, conn, { sessionId });
    assert.equal((await rawPost(h, conn, { jsonrpc: '2.0', id: i, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'bulky' }] } }, sessionId)).status, 202);
    // Served whole while the budget trims what earlier streams kept: every chunk, then the answer.
    await s.waitUntil(() => s.events.some((e) => e.json['id'] === i));
    assert.equal(s.events.filter((e) => (e.json['params'] as { update?: { sessionUpdate?: string } })?.update?.sessionUpdate === 'agent_message_chunk').length, CHUNKS);
    s.close();
  }
  return { conn, sessionIds };
}

test('the session streams of one connection keep at most --acp-retain-mb for resume; one resumed from before gets a replay_gap, and the connection and others are served', async (t) => {
  const d = await start(t, ['--acp-retain-mb', '1']);
  const h = rawClient(d);
  // Three turns of about 600 KB: 1.8 MB kept without the connection's budget.
  const { conn, sessionIds } = await connectionWithTurns(t, h, 3);
  const kept = await d.metric('troupe_acp_retained_bytes');
  assert.ok(kept > 0 && kept <= MiB, `the connection keeps ${kept} bytes`);
  // The first session's stream gave up its oldest events: a resume from its start says so.
  const resumed = await SseReader.open(h, conn, { sessionId: sessionIds[0]!, lastEventId: '0' });
  const [gap] = await resumed.waitFor(1);
  assert.equal(gap!.json['method'], '_troupe/replay_gap');
  assert.equal(gap!.id, undefined);
  const { firstAvailableId } = gap!.json['params'] as { firstAvailableId: number };
  assert.ok(firstAvailableId > 1, `events from ${firstAvailableId} on are kept`);
  // The stream goes on: a new turn on it is delivered after what it kept.
  assert.equal((await rawPost(h, conn, { jsonrpc: '2.0', id: 50, method: 'session/prompt', params: { sessionId: sessionIds[0], prompt: [{ type: 'text', text: 'hello' }] } }, sessionIds[0])).status, 202);
  await resumed.waitUntil(() => resumed.events.some((e) => e.json['id'] === 50));
  resumed.close();
  // Another client, over WebSocket, is served as ever.
  const other = d.connect('ws');
  t.after(() => other.close());
  await other.init();
  const sessionId = (await other.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })).sessionId;
  assert.equal((await other.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'bulky' }] })).stopReason, 'end_turn');
  assert.equal(other.updatesFor(sessionId, 'agent_message_chunk').length, CHUNKS);
});

test('all connections together keep at most --acp-retain-total-mb for resume, each still served', async (t) => {
  // Each connection's own budget (2 MiB) holds its two turns (about 1.2 MB); together they do not fit 2 MiB.
  const d = await start(t, ['--acp-retain-mb', '2', '--acp-retain-total-mb', '2']);
  const h = rawClient(d);
  await connectionWithTurns(t, h, 2);
  await connectionWithTurns(t, h, 2);
  const kept = await d.metric('troupe_acp_retained_bytes');
  assert.ok(kept > 0 && kept <= 2 * MiB, `the connections keep ${kept} bytes`);
});

test('--acp-retain-mb and --acp-retain-total-mb take whole MiB from 0', async () => {
  const { spawnSync } = await import('node:child_process');
  for (const [flag, bad] of [['--acp-retain-mb', '-1'], ['--acp-retain-total-mb', '1.5'], ['--acp-retain-mb', 'x']] as const) {
    const r = spawnSync(process.execPath, ['bin/troupe.js', 'serve', '--port', '0', `${flag}=${bad}`], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', TROUPE_HOME: '/nonexistent/never-made' } });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`${flag} must be an integer from 0 to`));
  }
});

/** A raw connection (its connection stream open until the test ends) and a session made on it. */
async function rawSession(t: { after(f: () => unknown): void }, h: Harness): Promise<{ conn: string; sessionId: string }> {
  const conn = await rawInitialize(h);
  const main = await SseReader.open(h, conn);
  t.after(() => main.close());
  assert.equal((await rawPost(h, conn, { jsonrpc: '2.0', id: 1, method: 'session/new', params: { cwd: tempDir(), mcpServers: [] } })).status, 202);
  const [created] = await main.waitFor(1);
  return { conn, sessionId: (created!.json['result'] as { sessionId: string }).sessionId };
}

/** The daemon's retained bytes once back at `before`, or as they are after 10 s. */
async function retainedBack(d: Daemon, before: number): Promise<number> {
  let kept = await d.metric('troupe_acp_retained_bytes');
  for (const deadline = Date.now() + 10_000; kept !== before && Date.now() < deadline; kept = await d.metric('troupe_acp_retained_bytes')) {
    await new Promise((r) => setTimeout(r, 20));
  }
  return kept;
}

/**
 * A daemon, a raw client, one session of its connection and what the daemon keeps then, and the
 * session's stream open with a prompt of `text` (request 2) taken.
 */
async function promptOnItsStream(t: { after(f: () => unknown): void }, text: string) {
  const d = await start(t, []);
  const h = rawClient(d);
  const { conn, sessionId } = await rawSession(t, h);
  // What the connection stream keeps (the session/new answer): all the connection keeps once the session is gone.
  const before = await d.metric('troupe_acp_retained_bytes');
  const s = await SseReader.open(h, conn, { sessionId });
  assert.equal((await rawPost(h, conn, { jsonrpc: '2.0', id: 2, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text }] } }, sessionId)).status, 202);
  return { d, h, conn, sessionId, before, s };
}

test('a session the client closed keeps nothing on its connection once the client leaves its stream: the stream goes', async (t) => {
  const { d, h, conn, sessionId, before, s } = await promptOnItsStream(t, 'hello');
  await s.waitUntil(() => s.events.some((e) => e.json['id'] === 2));
  assert.equal((await rawPost(h, conn, { jsonrpc: '2.0', id: 3, method: 'session/close', params: { sessionId } }, sessionId)).status, 202);
  await s.waitUntil(() => s.events.some((e) => e.json['id'] === 3));
  s.close();
  // The relay answers the close on the session's stream and then releases it; once the client has
  // left it, the stream goes with what it kept (before 2026-12-07 it kept the close's answer, and
  // the stream itself, for the connection's life: 1024 closed sessions and the connection could
  // open no more).
  assert.equal(await retainedBack(d, before), before, 'the closed session keeps nothing');
});

test('a session a client closed while another client stays attached keeps nothing on its connection once its withdrawn prompt is answered and it leaves its stream', async (t) => {
  const { d, h, conn, sessionId, before, s } = await promptOnItsStream(t, 'hang');
  await s.waitUntil(() => s.events.some((e) => (e.json['params'] as { update?: { sessionUpdate?: string } })?.update?.sessionUpdate === 'agent_message_chunk'));
  // Another client stays attached (over WebSocket, which keeps nothing for resume): the close is this connection's only.
  const other = d.connect('ws');
  t.after(() => other.close());
  await other.init();
  await other.agent.request('session/load', { sessionId, cwd: (await d.api('GET', `/v1/sessions/${sessionId}`)).json.cwd, mcpServers: [] });
  assert.equal((await rawPost(h, conn, { jsonrpc: '2.0', id: 3, method: 'session/close', params: { sessionId } }, sessionId)).status, 202);
  await s.waitUntil(() => s.events.some((e) => e.json['id'] === 3) && s.events.some((e) => e.json['id'] === 2));
  assert.equal((s.events.find((e) => e.json['id'] === 2)!.json['result'] as { stopReason?: string }).stopReason, 'cancelled');
  s.close();
  // The relay releases the stream once the close and the withdrawn prompt are both answered on it.
  assert.equal(await retainedBack(d, before), before, 'the session this connection closed keeps nothing on it');
  assert.equal((await other.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] })).stopReason, 'end_turn');
});

test('a session another client deleted keeps nothing on a connection that followed it once the client leaves its stream', async (t) => {
  const d = await start(t, []);
  const h = rawClient(d);
  const { conn: owner, sessionId } = await rawSession(t, h);
  const before = await d.metric('troupe_acp_retained_bytes');
  // Another connection follows the session: its turn streams on its session stream, which keeps it.
  const follower = await rawInitialize(h);
  const followed = await SseReader.open(h, follower, { sessionId });
  assert.equal((await rawPost(h, follower, { jsonrpc: '2.0', id: 1, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'hello' }] } }, sessionId)).status, 202);
  await followed.waitUntil(() => followed.events.some((e) => e.json['id'] === 1));
  // The owner deletes it: the follower is told, and then its stream of the session keeps nothing.
  const own = await SseReader.open(h, owner, { sessionId });
  assert.equal((await rawPost(h, owner, { jsonrpc: '2.0', id: 2, method: 'session/delete', params: { sessionId } }, sessionId)).status, 202);
  await own.waitUntil(() => own.events.some((e) => e.json['id'] === 2));
  await followed.waitUntil(() => followed.events.some((e) => e.json['method'] === '_troupe/session_deleted'));
  own.close();
  followed.close();
  assert.equal(await retainedBack(d, before), before, 'the deleted session keeps nothing on either connection');
});
