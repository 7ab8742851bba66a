// The management API against a real daemon: health, sessions with machine states, the event log
// as SSE with cursors (Last-Event-ID, invalid cursor), cancel, steer, delete and metrics; and the
// bad input a daemon must survive while it keeps serving everyone else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { Daemon, daemonWithSession, seqOfFeedId, tempDir, waitFor, daemonWithClient } from '../../support/daemon.js';
import { parsePrometheusText } from '../../support/prometheus-text.js';
import { NO_PROCESS_STATES } from '../../../src/daemon/machine-hub.js';

const script = {
  replies: [
    { when: 'ping', items: [{ text: 'pong' }] },
    { when: 'slow', items: [{ text: 'working ' }, { delay_ms: 400 }, { text: 'done' }] },
    { when: 'hang', items: [{ text: 'hanging' }, { hang: true }] },
    { when: 'say hi', items: [{ text: 'hi' }] },
    { when: 'long', items: Array.from({ length: 3000 }, (_, i) => ({ text: `w${i} ` })) },
  ],
};

/** Reads an SSE response until `stop` says enough; returns the parsed events. */
async function readSse(res: Response, stop: (events: { id?: string; event?: string; data: any }[]) => boolean, timeoutMs = 10_000) {
  const events: { id?: string; event?: string; data: any }[] = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  const deadline = Date.now() + timeoutMs;
  while (!stop(events) && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let end;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      const e: { id?: string; event?: string; data: any } = { data: undefined };
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) e.id = line.slice(4);
        else if (line.startsWith('event: ')) e.event = line.slice(7);
        else if (line.startsWith('data: ')) e.data = JSON.parse(line.slice(6));
      }
      if (e.data !== undefined) events.push(e);
    }
  }
  await reader.cancel().catch(() => undefined);
  return events;
}

test('health, sessions, session detail with machine states, and metrics', async (t) => {
  const d = await Daemon.start({ script });
  t.after(() => d.stop());
  const health = await fetch(`${d.url}/v1/health`);
  assert.equal(health.status, 200, 'health needs no token');
  const h = await health.json();
  assert.equal(h.version, JSON.parse((await import('node:fs')).readFileSync('package.json', 'utf8')).version);
  const c = d.connect('http');
  t.after(() => c.close());
  await c.init();
  const sessionId = (await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })).sessionId;
  // Its model and mode from its session/new's answer on: the relay adds its index entry before the answer goes.
  const fresh = (await d.api('GET', '/v1/sessions')).json.sessions;
  assert.deepEqual(fresh.map((s: any) => [s.id, s.model, s.mode]), [[sessionId, 'scripted/replay', 'default']]);
  await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] });
  // Answered by the process with an error: the mode does not exist.
  await assert.rejects(c.agent.request('session/set_mode', { sessionId, modeId: 'no-such-mode' }));
  const list = (await d.api('GET', '/v1/sessions')).json.sessions;
  assert.equal(list.length, 1);
  assert.equal(list[0].id, sessionId);
  assert.equal(list[0].title, 'ping');
  assert.ok(list[0].child.pid > 0);
  const detail = (await d.api('GET', `/v1/sessions/${sessionId}`)).json;
  assert.deepEqual([detail.machines.session, detail.machines.turn, detail.machines.child], ['idle', 'done', 'ready']);
  assert.ok(detail.transitions.some((x: any) => x.machine === 'turn' && x.state === 'modelStep'));
  const defs = (await d.api('GET', '/v1/machines')).json;
  assert.deepEqual(Object.keys(defs).sort(), ['child', 'session', 'turn']);
  const metrics = await (await fetch(`${d.url}/metrics`, { headers: d.headers })).text();
  // Valid exposition, read strictly: one HELP and TYPE per family, samples together, no duplicate series.
  const families = parsePrometheusText(metrics);
  assert.ok([...families.values()].every((f) => f.help !== '' && f.type !== 'untyped'), 'every family has its HELP and TYPE');
  assert.match(metrics, /^troupe_sessions_live 1$/m);
  assert.match(metrics, /^troupe_events_total \d+$/m);
  assert.match(metrics, /^troupe_event_loop_delay_max_seconds [\d.e-]+$/m);
  assert.match(metrics, /^troupe_event_loop_blocked_max_seconds [\d.e-]+$/m);
  // Counts that only grow are counters, one series per cause.
  const stalls = families.get('troupe_event_loop_stalls_over_50ms_total');
  assert.deepEqual([stalls?.type, stalls?.samples.map((x) => x.labels.cause).sort()], ['counter', ['blocked', 'starved']]);
  assert.ok(Number(/^troupe_children_rss_bytes (\d+)$/m.exec(metrics)?.[1]) > 10_000_000, 'children report their memory');
  // Request latency: one series per method and outcome, each request counted once, buckets cumulative.
  const latency = families.get('troupe_acp_request_duration_seconds');
  assert.equal(latency?.type, 'histogram');
  const count = (method: string, outcome: string) => latency!.samples.find((x) => x.name.endsWith('_count') && x.labels.method === method && x.labels.outcome === outcome)?.value;
  assert.deepEqual([count('session/new', 'ok'), count('session/prompt', 'ok'), count('session/set_mode', 'error'), count('session/prompt', 'error')], [1, 1, 1, undefined]);
  const prompt = latency!.samples.filter((x) => x.labels.method === 'session/prompt');
  const buckets = prompt.filter((x) => x.name.endsWith('_bucket')).map((x) => x.value);
  assert.ok(buckets.every((v, i) => i === 0 || v >= buckets[i - 1]!) && buckets.at(-1) === 1, `cumulative up to +Inf: ${buckets}`);
  assert.ok(prompt.find((x) => x.name.endsWith('_sum'))!.value > 0);
  assert.ok(detail.child.rss > 0 && detail.child.heartbeatAt > 0);
  assert.equal((await d.api('GET', '/v1/sessions/ses_nope')).status, 404);
});

test('events SSE: replay after a cursor, then live; Last-Event-ID resumes; bad cursors are refused', async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'ws', { script });
  await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] });
  const all = await readSse(await fetch(`${d.url}/v1/sessions/${sessionId}/events?after=0`, { headers: d.headers }), (e) => e.some((x) => x.data.type === 'turn_completed'));
  assert.deepEqual(all.map((e) => seqOfFeedId(e.id)), all.map((_, i) => i + 1), 'ids are the seqs 1, 2, 3 …');
  assert.equal(all[0]!.data.type, 'session_created');
  // Resume from the middle with Last-Event-ID, and watch a live turn arrive. The header wins over
  // the URL's cursor: a reconnecting EventSource sends it with the URL it first opened.
  const mid = Math.floor(all.length / 2);
  const res = await fetch(`${d.url}/v1/sessions/${sessionId}/events?after=${all.length}`, { headers: { ...d.headers, 'Last-Event-ID': String(mid) } });
  const live = c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'slow' }] });
  const resumed = await readSse(res, (e) => e.filter((x) => x.data.type === 'turn_completed').length >= 2);
  await live;
  assert.equal(seqOfFeedId(resumed[0]!.id), mid + 1, 'exactly the events after the cursor');
  assert.ok(resumed.every((e, i) => i === 0 || seqOfFeedId(e.id) === seqOfFeedId(resumed[i - 1]!.id) + 1), 'no hole, no duplicate');
  assert.ok(resumed.some((e) => e.data.type === 'agent_message_chunk' && e.data.text === 'done'), 'then live events');
  // A log longer than a feed keeps in memory, replayed from the start: pages read from the file.
  await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'long' }] });
  await waitFor('the feed closed', async () => !(await fetch(`${d.url}/metrics`, { headers: d.headers }).then((r) => r.text())).match(/^troupe_event_feeds_open [1-9]/m));
  const whole = await readSse(await fetch(`${d.url}/v1/sessions/${sessionId}/events?after=0`, { headers: d.headers }), (e) => e.filter((x) => x.data.type === 'turn_completed').length >= 3);
  assert.ok(whole.length > 3000);
  assert.deepEqual(whole.map((e) => seqOfFeedId(e.id)), whole.map((_, i) => i + 1), 'every seq from 1, once, in order');
  // An event's id is the same read from the log as sent live (its mark is of its content): a reader
  // coming back with the id of an event it had live is taken (test/integration/daemon/daemon-damaged-log.test.ts).
  assert.deepEqual(whole.slice(mid, mid + resumed.length).map((e) => e.id), resumed.map((e) => e.id));
  assert.deepEqual(whole.filter((e) => e.data.type === 'agent_message_chunk' && /^w\d+ $/.test(e.data.text)).map((e) => e.data.text), Array.from({ length: 3000 }, (_, i) => `w${i} `));
  const beyond = await fetch(`${d.url}/v1/sessions/${sessionId}/events?after=999999`, { headers: d.headers });
  assert.equal(beyond.status, 400);
  assert.equal((await beyond.json()).error.code, 'invalid_cursor');
  assert.equal((await fetch(`${d.url}/v1/sessions/${sessionId}/events?after=-3`, { headers: d.headers })).status, 400);
  // Number() reads these as 1; a seq is written in decimal digits and nothing else.
  for (const malformed of ['0x1', '1e0', '%201', '1.0']) {
    // Bounded: taken for a cursor, it opens a stream that never ends.
    const res = await fetch(`${d.url}/v1/sessions/${sessionId}/events?after=${malformed}`, { headers: d.headers, signal: AbortSignal.timeout(5_000) });
    assert.equal(res.status, 400, malformed);
    assert.equal((await res.json()).error.code, 'invalid_cursor', malformed);
  }
  const inspect = await fetch(`${d.url}/v1/inspect/transitions?after=0x1`, { headers: d.headers, signal: AbortSignal.timeout(5_000) });
  assert.equal(inspect.status, 400, 'the transition feed too');
  assert.equal((await inspect.json()).error.code, 'invalid_cursor');
  // An empty, negative or fractional cursor, in the URL or in Last-Event-ID, is refused the same way:
  // until 2026-12-06 an empty `after=` was read as 0 and replayed the whole log. Digits past the
  // largest safe integer are refused naming the cursor sent: until 2026-12-07 the refusal named the
  // number Number() made of it (`cursor must be a non-negative integer, got 100000000000000000000`).
  const refusals: [string, Record<string, string>, said?: string][] = [
    ['?after=', {}],
    ['?after=-1', {}],
    ['?after=1.5', {}],
    ['?after=one', {}],
    ['?after=', { 'Last-Event-ID': 'x' }],
    ['?after=2', { 'Last-Event-ID': '-1' }],
    ['', { 'Last-Event-ID': '2.5' }],
    ['', { 'Last-Event-ID': 'garbage' }],
    ['?after=99999999999999999999', {}, 'after 99999999999999999999 is beyond any seq'],
    ['?after=1', { 'Last-Event-ID': '9007199254740993' }, 'Last-Event-ID 9007199254740993 is beyond any seq'],
  ];
  for (const feed of [`/v1/sessions/${sessionId}/events`, '/v1/inspect/transitions']) {
    for (const [query, headers, said] of refusals) {
      const res = await fetch(`${d.url}${feed}${query}`, { headers: { ...d.headers, ...headers }, signal: AbortSignal.timeout(5_000) });
      const what = `${feed}${query} ${JSON.stringify(headers)}`;
      assert.equal(res.status, 400, what);
      const { error } = (await res.json()) as { error: { code: string; message: string } };
      assert.equal(error.code, 'invalid_cursor', what);
      if (said) assert.ok(error.message.startsWith(said), `${what}: ${error.message}`);
    }
  }
  // An empty Last-Event-ID is no cursor (EventSource sends none when the last id it saw was empty):
  // the URL's cursor applies.
  const emptyHeader = await readSse(await fetch(`${d.url}/v1/sessions/${sessionId}/events?after=${mid}`, { headers: { ...d.headers, 'Last-Event-ID': '' } }), (e) => e.length > 0);
  assert.equal(seqOfFeedId(emptyHeader[0]!.id), mid + 1, 'the events after the URL cursor');
  assert.equal((await fetch(`${d.url}/v1/sessions/ses_nope/events`, { headers: d.headers })).status, 404);
});

test('cancel, steer and delete through the management API', async (t) => {
  const { d, c } = await daemonWithClient(t, 'http', { script });
  const cwd = tempDir();
  const sessionId = (await c.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  const slow = c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'slow' }] });
  await c.until(() => c.updatesFor(sessionId, 'agent_message_chunk').length > 0, 'slow turn');
  const detail = (await d.api('GET', `/v1/sessions/${sessionId}`)).json;
  const state: any = await c.agent.request('_troupe/session_state', { sessionId });
  const wrong = await d.api('POST', `/v1/sessions/${sessionId}/steer`, { expectedTurnId: 'turn_wrong', text: 'x' });
  assert.deepEqual([wrong.status, wrong.json.error.code], [409, 'turn_mismatch']);
  const ok = await d.api('POST', `/v1/sessions/${sessionId}/steer`, { expectedTurnId: state.turnId, text: 'also say hi' });
  assert.equal(ok.status, 200);
  assert.match(ok.json.steerId, /^steer_/);
  assert.equal((await slow).stopReason, 'end_turn');
  assert.ok(detail.machines.session === 'running');
  assert.equal((await d.api('POST', `/v1/sessions/${sessionId}/steer`, { text: 'no turn id' })).status, 400);
  const hanging = c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hang' }] });
  await c.until(() => c.updatesFor(sessionId, 'agent_message_chunk').some((u) => u.content.text === 'hanging'), 'hanging turn');
  const named = async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.turnId;
  // The daemon learns of the turn once its turn_started is durable and reported: waited for as long
  // as a loaded machine may take (the 2 s this waited until 2026-12-07 is short under load).
  assert.match(await waitFor('the running turn named', named), /^turn_/, 'the running turn is named');
  const badPrompt = await d.api('POST', `/v1/sessions/${sessionId}/steer`, { expectedTurnId: await named(), prompt: [{ type: 'bogus' }] });
  assert.deepEqual([badPrompt.status, badPrompt.json.error.code], [400, 'invalid_params'], 'the child\'s typed refusal, not a 500');
  // Blocks of a known type but not well formed (or no block at all) are refused too: taken, they
  // were logged as steer_received events that break the event schema, and sent on to clients.
  const hangingTurn = await named();
  for (const prompt of [[null], [{ type: 'text' }], [{ type: 'image', data: 'xx' }], [{ type: 'resource', resource: null }], [{ type: 'resource_link', uri: 'file:///x' }]]) {
    const refused = await d.api('POST', `/v1/sessions/${sessionId}/steer`, { expectedTurnId: hangingTurn, prompt });
    assert.deepEqual([refused.status, refused.json.error?.code], [400, 'invalid_params'], JSON.stringify(prompt));
  }
  assert.equal((await d.api('POST', `/v1/sessions/${sessionId}/steer`, { expectedTurnId: hangingTurn, text: 'the one steer' })).status, 200);
  const logged = await readSse(await fetch(`${d.url}/v1/sessions/${sessionId}/events?after=0`, { headers: d.headers }), (e) => e.some((x) => x.data.type === 'steer_received' && x.data.turnId === hangingTurn));
  assert.deepEqual(logged.filter((x) => x.data.type === 'steer_received' && x.data.turnId === hangingTurn).map((x) => x.data.content), [[{ type: 'text', text: 'the one steer' }]], 'only the well-formed steer reached the log');
  const cancel = await d.api('POST', `/v1/sessions/${sessionId}/cancel`);
  assert.deepEqual(cancel.json, { sessionId, cancelled: true });
  assert.equal((await hanging).stopReason, 'cancelled');
  assert.deepEqual((await d.api('POST', `/v1/sessions/${sessionId}/cancel`)).json, { sessionId, cancelled: false }, 'nothing left to cancel');
  const del = await d.api('DELETE', `/v1/sessions/${sessionId}`);
  assert.equal(del.status, 200);
  assert.equal((await d.api('GET', `/v1/sessions/${sessionId}`)).status, 404);
  assert.deepEqual((await d.api('DELETE', `/v1/sessions/${sessionId}`)).json, { sessionId, deleted: true }, 'a second DELETE succeeds');
  const never = await d.api('DELETE', '/v1/sessions/ses_0nosuchsession');
  assert.deepEqual([never.status, never.json.error?.code], [404, 'session_not_found'], 'a mistyped id is not deleted: true');
  // Its log stays on disk, but its event feed is gone like the rest of it (bounded: an answer here opens a stream).
  const events = await fetch(`${d.url}/v1/sessions/${sessionId}/events`, { headers: d.headers, signal: AbortSignal.timeout(5_000) });
  assert.equal(events.status, 404, 'no event feed for a deleted session');
  assert.equal((await events.json()).error.code, 'session_not_found');
  await assert.rejects(c.agent.request('session/load', { sessionId, cwd, mcpServers: [] }), (e: any) => e.code === -32002);
});

test('a session whose process died mid-turn and is not restarted (failed) names no running turn', async (t) => {
  const { d, c } = await daemonWithClient(t, 'ws', { script, args: ['--restart-intensity', '0'] });
  const sessionId = (await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })).sessionId;
  const hanging = c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hang' }] });
  const running = await waitFor('the running turn named', async () => {
    const e = (await d.api('GET', `/v1/sessions/${sessionId}`)).json;
    return e.turnId && e;
  });
  const turnId = running.turnId;
  process.kill(running.child.pid, 'SIGKILL');
  await assert.rejects(hanging, (e: any) => e.data?.code === 'agent_crashed');
  const failed = await waitFor('the session failed', async () => {
    const e = (await d.api('GET', `/v1/sessions/${sessionId}`)).json;
    return e.child?.state === 'failed' && e;
  });
  // The turn ended with its process (a next process would log it agent_crashed); until 2026-12-06
  // the detail kept naming it as running, for as long as the daemon ran.
  assert.equal(failed.turnId, undefined, `no running turn (it named ${turnId})`);
  // Steering the turn it named is refused as the session's every request is: it failed (until
  // 2026-12-07 409 no_active_turn, test/integration/daemon/daemon-revive.test.ts).
  const steer = await d.api('POST', `/v1/sessions/${sessionId}/steer`, { expectedTurnId: turnId, text: 'x' });
  assert.deepEqual([steer.status, steer.json.error?.code], [503, 'session_failed']);
});

test('a session deleted while its prompt runs: the prompt is answered session_not_found (deleted), not agent_crashed', async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'ws', { script });
  const hanging = c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hang' }] }).catch((e) => e);
  await c.until(() => c.updatesFor(sessionId, 'agent_message_chunk').some((u) => u.content.text === 'hanging'), 'hanging turn');
  assert.equal((await d.api('DELETE', `/v1/sessions/${sessionId}`)).status, 200);
  const err: any = await hanging;
  assert.equal(err?.data?.code, 'session_not_found', JSON.stringify(err));
  assert.match(String(err.message), /was deleted while this request ran/);
});

test('a session at rest is released: closed, or idle-stopped, with its clients gone, the daemon keeps nothing of it; the next message brings it back whole', async (t) => {
  const d = await Daemon.start({ script, args: ['--idle-ms', '300'] });
  t.after(() => d.stop());
  const cwd = tempDir();
  const ping = (c: ReturnType<Daemon['connect']>, sessionId: string) => c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] });
  // One session closed by its client, one left to its idle stop.
  const a = d.connect('http');
  await a.init();
  const closed = (await a.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  await ping(a, closed);
  await a.agent.request('session/close', { sessionId: closed });
  const b = d.connect('ws');
  await b.init();
  const idle = (await b.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  await ping(b, idle);
  // The closed one is let go although its client stays connected (an editor keeps one connection
  // for all its sessions); the other is held while its client is attached and its child runs.
  await waitFor('the closed session released, its client still connected', async () => (await d.metric('troupe_sessions_held')) === 1);
  a.close();
  b.close();
  await waitFor('both sessions released', async () => (await d.metric('troupe_sessions_held')) === 0);
  assert.equal(await d.metric('troupe_sessions_live'), 0);
  for (const id of [closed, idle]) {
    const detail = (await d.api('GET', `/v1/sessions/${id}`)).json;
    assert.equal(detail.child, null, `${id} has no child record left`);
    // Its machines' last states are still known (the inspector draws them), and releasing it is no transition.
    assert.equal(detail.machines.child, 'idleStopped');
    assert.ok(!detail.transitions.some((x: any) => x.event === 'xstate.stop'), JSON.stringify(detail.transitions.slice(-3)));
  }
  assert.equal(d.childPids().length, 1, 'only the warm pool child runs');
  // Back, from another client: one by session/load (its history replayed), one by a prompt after resume.
  const c = d.connect('ws');
  t.after(() => c.close());
  await c.init();
  await c.agent.request('session/load', { sessionId: closed, cwd, mcpServers: [] });
  assert.deepEqual(c.updatesFor(closed, 'agent_message_chunk').map((u) => u.content.text), ['pong'], 'the history is replayed');
  await c.agent.request('session/resume', { sessionId: idle, cwd, mcpServers: [] });
  assert.equal((await ping(c, idle)).stopReason, 'end_turn');
  assert.equal((await ping(c, closed)).stopReason, 'end_turn');
  assert.equal(await d.metric('troupe_sessions_held'), 2);
  const detail = (await d.api('GET', `/v1/sessions/${idle}`)).json;
  // Held again, with a child of its own. With --idle-ms 300 its process may have stopped idle again
  // by now, and then it shows no pid (the dead one's may be another process's).
  assert.ok(detail.child, 'a child serves it again');
  assert.equal(detail.child.pid === null, NO_PROCESS_STATES.has(detail.child.state), `a pid exactly while a process runs it: ${JSON.stringify(detail.child)}`);
  assert.deepEqual(c.updatesFor(idle, 'agent_message_chunk').map((u) => u.content.text), ['pong'], 'resumed without replay, its new turn streamed to the client that revived it');
});

test('a session whose client left before its session/new was answered is not held for that client: it comes to rest', async (t) => {
  // No warm pool: the child starts cold, so the client's DELETE arrives before the answer.
  const d = await Daemon.start({ script, args: ['--pool', '0', '--idle-ms', '300'] });
  t.after(() => d.stop());
  const headers = { ...d.headers, 'content-type': 'application/json' };
  const init = await fetch(`${d.url}/acp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1 } }) });
  const connectionId = init.headers.get('acp-connection-id')!;
  const made = await fetch(`${d.url}/acp`, { method: 'POST', headers: { ...headers, 'Acp-Connection-Id': connectionId }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: tempDir(), mcpServers: [] } }) });
  assert.equal(made.status, 202);
  assert.equal((await fetch(`${d.url}/acp`, { method: 'DELETE', headers: { ...d.headers, 'Acp-Connection-Id': connectionId } })).status, 202);
  const listed = await waitFor('the session made', async () => (await d.api('GET', '/v1/sessions')).json.sessions[0]);
  assert.equal(listed.connections, 0, 'the client that left is not attached');
  await waitFor('the session at rest, released', async () => (await d.metric('troupe_sessions_held')) === 0, 5_000);
  assert.equal(await d.metric('troupe_acp_connections'), 0);
});

test('an HTTP connection keeps nothing for resume of a session its client closed; reopened at once, the session is served by a new child', async (t) => {
  const { d, c, sessionId, cwd } = await daemonWithSession(t, 'http', { script });
  const retained = () => d.metric('troupe_acp_retained_bytes');
  await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'long' }] });
  // 3,000 updates went out on the session's SSE stream and are kept for Last-Event-ID resume.
  const before = await retained();
  assert.ok(before > 300_000, `kept for resume: ${before} bytes`);
  await c.agent.request('session/close', { sessionId });
  // At once, while its child is still being stopped: the resume waits for it and wakes a new one.
  const resumed = c.agent.request('session/resume', { sessionId, cwd, mcpServers: [] });
  const after = await retained();
  assert.ok(after < 20_000, `let go once the session is closed: ${after} bytes`);
  await resumed;
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] })).stopReason, 'end_turn');
  assert.ok(c.updatesFor(sessionId, 'agent_message_chunk').some((u) => u.content.text === 'pong'));
});

test('a prompt sent while its session\'s child is being stopped runs in a new child, busy with it', async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'ws', { script });
  const first = (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.pid as number;
  await c.agent.request('session/close', { sessionId });
  // At once: the prompt waits for the closing child to go, then wakes a new one.
  const hanging = c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hang' }] });
  await c.until(() => c.updatesFor(sessionId, 'agent_message_chunk').some((u) => u.content.text === 'hanging'), 'the prompt running');
  const child = (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child;
  assert.notEqual(child.pid, first);
  assert.equal(child.state, 'busy', 'the new child is busy with the prompt that woke it');
  assert.deepEqual((await d.api('POST', `/v1/sessions/${sessionId}/cancel`)).json, { sessionId, cancelled: true });
  assert.equal((await hanging).stopReason, 'cancelled');
});

test('a session\'s event feed goes with its last watcher and ends when the session is deleted; nothing is lost for a watcher coming back', async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'ws', { script });
  await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] });
  const first = await readSse(await fetch(`${d.url}/v1/sessions/${sessionId}/events?after=0`, { headers: d.headers }), (e) => e.some((x) => x.data.type === 'turn_completed'));
  await waitFor('the feed dropped with its watcher', async () => (await d.metric('troupe_event_feeds_open')) === 0);
  // A turn while nobody watches, then the watcher comes back from where it was.
  await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'say hi' }] });
  const last = seqOfFeedId(first[first.length - 1]!.id);
  const back = await readSse(await fetch(`${d.url}/v1/sessions/${sessionId}/events`, { headers: { ...d.headers, 'Last-Event-ID': String(last) } }), (e) => e.some((x) => x.data.type === 'turn_completed'));
  assert.equal(seqOfFeedId(back[0]!.id), last + 1, 'exactly the events after the cursor');
  assert.ok(back.every((e, i) => i === 0 || seqOfFeedId(e.id) === seqOfFeedId(back[i - 1]!.id) + 1), 'no hole, no duplicate');
  assert.ok(back.some((e) => e.data.type === 'agent_message_chunk' && e.data.text === 'hi'));
  assert.equal((await fetch(`${d.url}/v1/sessions/${sessionId}/events?after=999999`, { headers: d.headers })).status, 400);
  assert.equal(await d.metric('troupe_event_feeds_open'), 0, 'a refused cursor leaves no feed open');
  // A live watcher of a session being deleted sees its stream end, and the feed goes.
  const watching = await fetch(`${d.url}/v1/sessions/${sessionId}/events?after=0`, { headers: d.headers });
  await waitFor('the feed open', async () => (await d.metric('troupe_event_feeds_open')) === 1);
  assert.equal((await d.api('DELETE', `/v1/sessions/${sessionId}`)).status, 200);
  const text = watching.text();
  const outcome = await Promise.race([text.then(() => 'ended'), new Promise((r) => setTimeout(() => r('still open'), 15_000))]);
  assert.equal(outcome, 'ended', 'the stream ends with the session');
  assert.match(await text, /"type":"turn_completed"/, 'what was published before the delete was delivered');
  assert.equal(await d.metric('troupe_event_feeds_open'), 0);
});

/** Announces a 17 MiB body (over the 16 MiB limit) and reads the answer before sending it all. */
function declaredTooLarge(d: Daemon): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${d.url}/acp`, { method: 'POST', headers: { ...d.headers, 'content-type': 'application/json', 'content-length': String(17 * 1024 * 1024) } });
    req.on('response', (res) => {
      resolve(res.statusCode ?? 0);
      req.destroy();
    });
    req.on('error', (err) => reject(err));
    req.write('{"jsonrpc":"2.0",');
  });
}

test('bad input gets typed errors and the daemon keeps serving', async (t) => {
  const { d, c } = await daemonWithClient(t, 'http', { script });
  const sessionId = (await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })).sessionId;
  const post = (headers: Record<string, string>, body: string) => fetch(`${d.url}/acp`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1 } });
  assert.equal((await post({}, init)).status, 401, 'no token');
  assert.equal((await post({ Authorization: 'Bearer wrong-token-wrong-token-wrong' }, init)).status, 403, 'wrong token');
  assert.equal((await post({ ...d.headers, Origin: 'https://evil.example' }, init)).status, 403, 'foreign Origin');
  assert.equal((await post(d.headers, '{not json')).status, 400, 'malformed JSON');
  assert.equal((await post({ ...d.headers, 'Acp-Connection-Id': 'nope' }, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/list', params: {} }))).status, 404, 'unknown connection');
  assert.equal(await declaredTooLarge(d), 413, 'oversized body');
  await assert.rejects(c.agent.request('session/prompt', { sessionId: 'ses_unknown', prompt: [{ type: 'text', text: 'x' }] }), (e: any) => e.code === -32002 && e.data?.sessionId === 'ses_unknown');
  await assert.rejects(c.agent.request('session/new', { cwd: 'relative', mcpServers: [] }), (e: any) => e.code === -32602);
  // Over WebSocket nothing checks the id first: an empty one is a session that does not exist, not a missing method.
  const ws = d.connect('ws');
  t.after(() => ws.close());
  await ws.init();
  await assert.rejects(ws.agent.request('session/prompt', { sessionId: '', prompt: [{ type: 'text', text: 'x' }] }), (e: any) => e.code === -32002 && e.data?.sessionId === '');
  // session/list is answered by the daemon itself: its params are checked as a child checks its own.
  for (const cwd of [5, ['a'], {}, 'relative/dir']) {
    await assert.rejects(c.agent.request('session/list', { cwd } as any), (e: any) => e.code === -32602 && e.data?.code === 'invalid_params', JSON.stringify(cwd));
  }
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] })).stopReason, 'end_turn', 'still serving');
});

test('a message that is no JSON-RPC request, notification or response is answered -32600 (id null); a request with id null is answered', async (t) => {
  const d = await Daemon.start({ script });
  t.after(() => d.stop());
  const headers = { ...d.headers, 'content-type': 'application/json' };
  const init = await fetch(`${d.url}/acp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1 } }) });
  const connectionId = init.headers.get('acp-connection-id')!;
  const stream = await fetch(`${d.url}/acp`, { headers: { ...d.headers, Accept: 'text/event-stream', 'Acp-Connection-Id': connectionId } });
  const bad = [
    { jsonrpc: '2.0', id: {}, method: 'session/list' },
    { jsonrpc: '2.0', id: [7], method: 'session/list' },
    { jsonrpc: '2.0', id: 8, method: 5 },
    { jsonrpc: '1.0', id: 9, method: 'session/list' },
    {},
  ];
  for (const msg of [...bad, { jsonrpc: '2.0', id: null, method: 'session/list', params: {} }, { jsonrpc: '2.0', id: 10, method: 'session/list', params: {} }]) {
    const res = await fetch(`${d.url}/acp`, { method: 'POST', headers: { ...headers, 'Acp-Connection-Id': connectionId }, body: JSON.stringify(msg) });
    assert.equal(res.status, 202);
  }
  const events = await readSse(stream, (e) => e.some((x) => x.data.id === 10));
  const answers = events.map((e) => e.data);
  assert.equal(answers.length, bad.length + 2, JSON.stringify(answers));
  for (const a of answers.slice(0, bad.length)) assert.deepEqual([a.id, a.error?.code, a.error?.data?.code], [null, -32600, 'invalid_request']);
  assert.deepEqual([answers[bad.length].id, Array.isArray(answers[bad.length].result?.sessions)], [null, true], 'id null is a request');
  assert.equal(answers[bad.length + 1].id, 10);
});

test('session/cancel for a session whose child was stopped idle does not start a child (nothing runs to cancel)', async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'http', { script, args: ['--idle-ms', '300'] });
  const state = async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child?.state;
  await waitFor('the idle stop', async () => (await state()) === 'idleStopped');
  // From another connection, raw: the 202 comes once the relay has taken the notification.
  const headers = { ...d.headers, 'content-type': 'application/json' };
  const init = await fetch(`${d.url}/acp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1 } }) });
  const cancel = await fetch(`${d.url}/acp`, {
    method: 'POST',
    headers: { ...headers, 'Acp-Connection-Id': init.headers.get('acp-connection-id')!, 'Acp-Session-Id': sessionId },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId } }),
  });
  assert.equal(cancel.status, 202);
  assert.equal(await state(), 'idleStopped', 'no child started for a cancel');
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] })).stopReason, 'end_turn', 'a prompt still wakes it');
});

test('live sessions are capped: one more is capacity_exceeded', async (t) => {
  const { d, c } = await daemonWithClient(t, 'http', { script, args: ['--max-sessions', '1'] });
  await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] });
  // Until 2026-12-07: "runs 1 live sessions".
  await assert.rejects(c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] }), (e: any) => e.code === -32052 && e.data?.code === 'capacity_exceeded' && e.message === 'the daemon already runs 1 live session (--max-sessions)');
});

test('the live-session cap holds for session/new requests sent at once', async (t) => {
  const { d, c } = await daemonWithClient(t, 'http', { script, args: ['--max-sessions', '1'] });
  // None of them is answered before the others arrive: each must count against the cap.
  const results = await Promise.allSettled([1, 2, 3].map(() => c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })));
  assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1, 'one session made');
  for (const r of results) if (r.status === 'rejected') assert.equal((r.reason as any).data?.code, 'capacity_exceeded');
  assert.equal((await d.api('GET', '/v1/health')).json.sessions.live, 1);
});

test('--connection-idle-ms reaps a connection whose client vanished', async (t) => {
  const d = await Daemon.start({ script, args: ['--connection-idle-ms', '300'] });
  t.after(() => d.stop());
  const headers = { ...d.headers, 'content-type': 'application/json' };
  const init = await fetch(`${d.url}/acp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1 } }) });
  const connectionId = init.headers.get('acp-connection-id')!;
  assert.ok(connectionId);
  const list = () => fetch(`${d.url}/acp`, { method: 'POST', headers: { ...headers, 'Acp-Connection-Id': connectionId }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/list', params: {} }) });
  assert.equal((await list()).status, 202, 'alive while used');
  // The client goes away without DELETE: no stream, no request. Watch the connection count only
  // (any request on the connection would count as activity).
  const connections = () => d.metric('troupe_acp_connections');
  assert.equal(await connections(), 1);
  const deadline = Date.now() + 10_000;
  while ((await connections()) !== 0) {
    if (Date.now() > deadline) throw new Error('the abandoned connection was never reaped');
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal((await list()).status, 404, 'its id is gone');
});

test('--child-nice runs children at that scheduling niceness', async (t) => {
  const { d, c } = await daemonWithClient(t, 'http', { script, args: ['--child-nice', '7'] });
  const sessionId = (await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })).sessionId;
  const pid = (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.pid;
  // Field 19 of /proc/PID/stat is the niceness.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  assert.equal(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]), 7);
  // Children run in a session of their own: where the kernel schedules sessions as groups
  // (autogroup), the group's nice is what weighs against the daemon's, and it is set too.
  if (existsSync(`/proc/${pid}/autogroup`) && readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').trim() === '1') {
    assert.match(readFileSync(`/proc/${pid}/autogroup`, 'utf8'), /nice 7$/m);
    assert.doesNotMatch(readFileSync(`/proc/${d.proc.pid}/autogroup`, 'utf8'), /nice 7$/m, "the daemon's own group keeps its nice");
  }
});
