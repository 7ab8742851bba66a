// A session's child over its life, with real processes: too many crashes fail the session (a child
// that dies at every start too); one over its memory budget or writing no protocol is killed and
// restarted; a hung child is found by its missing heartbeats; an idle child stops and is respawned
// on demand, within --max-sessions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { type AcpClient, breakableStart, Daemon, processAlive, tempDir, waitFor, daemonWithClient } from '../../support/daemon.js';
import { parsePrometheusText } from '../../support/prometheus-text.js';
import { childOf, script } from './supervision.fixture.js';

test('exceeding the restart intensity marks the session failed and tells its clients; it stays failed once released and after a daemon restart', async (t) => {
  const { d, c } = await daemonWithClient(t, 'http', { script, args: ['--restart-intensity', '1', '--restart-period-ms', '60000'] });
  const cwd = tempDir();
  const sessionId = (await c.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  const first = (await childOf(d, sessionId)).pid;
  process.kill(first, 'SIGKILL');
  const second = await waitFor('a restart', async () => {
    const ch = await childOf(d, sessionId);
    return ch.pid !== first && ch.state === 'ready' && ch.pid;
  });
  process.kill(second, 'SIGKILL');
  await c.until(() => c.notifications.some((n) => n.method === '_troupe/session_failed'), 'session_failed notification');
  const entry = await waitFor('status failed in the index', async () => {
    const e = (await d.api('GET', `/v1/sessions/${sessionId}`)).json;
    return e.status === 'failed' && e;
  });
  assert.equal(entry.child.state, 'failed');
  const isFailed = (e: any) => e.data?.code === 'session_failed';
  await assert.rejects(c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] }), isFailed);
  // Its client gone, the daemon lets go of it; its index status still answers, to anyone.
  c.close();
  await waitFor('the failed session released', async () => (await d.metric('troupe_sessions_held')) === 0);
  const other = d.connect('ws');
  t.after(() => other.close());
  await other.init();
  await assert.rejects(other.agent.request('session/load', { sessionId, cwd, mcpServers: [] }), isFailed);
  // And after a restart of the daemon on the same home.
  await d.stop();
  const again = await Daemon.start({ script, home: d.home });
  t.after(() => again.stop());
  const later = again.connect('http');
  t.after(() => later.close());
  await later.init();
  await assert.rejects(later.agent.request('session/resume', { sessionId, cwd, mcpServers: [] }), isFailed);
  assert.equal(await again.metric('troupe_sessions_held'), 0, 'no child was started for it');
  // The pool's child is started by the spawner process, which the daemon starts first.
  await waitFor('the warm pool child', async () => (await again.metric('troupe_pool_warm')) === 1);
  assert.equal(await again.metric('troupe_children_spawned_total'), 1, 'only the warm pool child was started');
  assert.equal(again.childPids().length, 1, 'only the warm pool child runs');
});

test('a hung child (SIGSTOP) is found by its missing heartbeats, killed and restarted', async (t) => {
  const { d, c } = await daemonWithClient(t, 'http', { script, args: ['--heartbeat-ms', '100', '--heartbeat-timeout-ms', '700'] });
  const sessionId = (await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })).sessionId;
  const hung = (await childOf(d, sessionId)).pid;
  process.kill(hung, 'SIGSTOP');
  const fresh = await waitFor('a replacement child', async () => {
    const ch = await childOf(d, sessionId);
    return ch.pid !== hung && ch.state === 'ready' && ch.pid;
  });
  assert.ok(!processAlive(hung), 'the hung process was killed');
  assert.equal(await d.metric('troupe_child_slow_waits_total'), 0, 'a stopped child is not taken for one short of CPU');
  assert.notEqual(fresh, hung);
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] })).stopReason, 'end_turn');
});

test('an idle child stops and is respawned transparently on the next prompt', async (t) => {
  const { d, c } = await daemonWithClient(t, 'http', { script, args: ['--idle-ms', '300'] });
  const sessionId = (await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })).sessionId;
  await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] });
  const before = (await childOf(d, sessionId)).pid;
  await waitFor('idle stop', async () => (await childOf(d, sessionId)).state === 'idleStopped');
  await waitFor('the idle process to exit', async () => !processAlive(before));
  // The dead child's pid is not shown: another process may have it by now.
  assert.equal((await childOf(d, sessionId)).pid, null);
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] })).stopReason, 'end_turn');
  const after = await childOf(d, sessionId);
  assert.notEqual(after.pid, before);
  assert.equal(after.restarts, 0, 'a wake is not a restart');
  assert.equal(after.wakes, 1);
  assert.equal(c.updatesFor(sessionId, 'agent_message_chunk').filter((u) => u.content.text === 'pong').length, 2);
});

test('a session whose process is gone (stopped idle, or killed and failed) shows no memory or heartbeat of that process', async (t) => {
  const { d, c } = await daemonWithClient(t, 'http', { script: { replies: [{ when: 'hang', items: [{ hang: true }] }, ...script.replies] }, args: ['--idle-ms', '1500', '--heartbeat-ms', '100', '--restart-intensity', '0'] });
  const [idle, killed] = [await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] }), await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })].map((r) => r.sessionId as string);
  // Busy, the one to kill cannot stop idle first; the other sends heartbeats for the 1.5 s it waits.
  const hanging = c.agent.request('session/prompt', { sessionId: killed, prompt: [{ type: 'text', text: 'hang' }] }).catch((e: any) => e?.data?.code);
  const victim = await waitFor('a heartbeat of the busy one', async () => {
    const ch: any = await childOf(d, killed);
    return ch.state === 'busy' && ch.rss > 0 && ch.pid;
  });
  process.kill(victim, 'SIGKILL');
  assert.equal(await hanging, 'agent_crashed');
  await waitFor('the killed one failed', async () => (await childOf(d, killed)).state === 'failed');
  await waitFor('the other stopped idle', async () => (await childOf(d, idle)).state === 'idleStopped');
  for (const id of [idle, killed]) {
    const child: any = await childOf(d, id);
    assert.equal(child.pid, null);
    assert.deepEqual([child.rss, child.heapUsed, child.heartbeatAt], [undefined, undefined, undefined], `${child.state}: ${JSON.stringify(child)}`);
  }
  assert.equal(await d.metric('troupe_children_rss_bytes'), 0, 'no live child');
});

test('clients that come back at once to their idle-stopped sessions wake them within --max-sessions: the rest get capacity_exceeded, the woken ones go on from their history', async (t) => {
  // Long enough that the woken children are still running when they are counted below, on a
  // loaded machine too (300 ms was not, at a load of 20 on 2 cores).
  const d = await Daemon.start({ script, args: ['--idle-ms', '1500', '--pool', '0', '--max-sessions', '2'] });
  t.after(() => d.stop());
  const clients = [0, 1, 2].map(() => d.connect('ws'));
  t.after(() => clients.forEach((c) => c.close()));
  const startAndIdle = async (c: AcpClient) => {
    await c.init();
    const sessionId = (await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })).sessionId as string;
    await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] });
    await waitFor('idle stop', async () => (await childOf(d, sessionId)).state === 'idleStopped');
    return sessionId;
  };
  // The first two together (the cap), both stopped idle before the third starts: only then are all
  // three under the cap. (Until 2026-12-06 one at a time: three idle waits instead of two.)
  const ids = [...(await Promise.all(clients.slice(0, 2).map(startAndIdle))), await startAndIdle(clients[2]!)];
  // Each client is still attached to its session: the relay holds it, and the prompt wakes it.
  const answers = await Promise.allSettled(clients.map((c, i) => c.agent.request('session/prompt', { sessionId: ids[i], prompt: [{ type: 'text', text: 'ping' }] })));
  const woken = ids.filter((_, i) => answers[i]!.status === 'fulfilled');
  assert.equal(woken.length, 2, `two of three woken: ${JSON.stringify(answers.map((a) => (a.status === 'fulfilled' ? a.value : a.reason)))}`);
  for (const a of answers) if (a.status === 'rejected') assert.equal((a.reason as any).data?.code, 'capacity_exceeded');
  for (const [i, sessionId] of ids.entries()) {
    const child = await childOf(d, sessionId);
    assert.equal(child.wakes, woken.includes(sessionId) ? 1 : 0, `session ${i}: ${JSON.stringify(child)}`);
    // The woken turn's reply followed the first one's in the same stream.
    if (woken.includes(sessionId)) assert.equal(clients[i]!.updatesFor(sessionId, 'agent_message_chunk').filter((u) => u.content.text === 'pong').length, 2);
  }
  assert.equal(d.childPids().length, 2, 'one process per woken session, none for the refused one');
  assert.equal((await d.api('GET', '/v1/health')).json.sessions.live, 2);
});

test('a config file the agent cannot use: session/new is refused with the problem, not a crash loop (session_failed)', async (t) => {
  const { mkdirSync, writeFileSync } = await import('node:fs');
  const cfg = tempDir();
  mkdirSync(`${cfg}/troupe`);
  writeFileSync(`${cfg}/troupe/config.json`, '{ not json');
  const { d, c } = await daemonWithClient(t, 'http', { env: { XDG_CONFIG_HOME: cfg } });
  for (let i = 0; i < 2; i++) {
    const err: any = await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] }).catch((e) => e);
    assert.equal(err?.data?.code, 'invalid_params', JSON.stringify(err));
    assert.match(String(err?.message), /the troupe config .* is not valid JSON/);
  }
  assert.equal(await d.metric('troupe_child_restarts_total'), 0, 'no child crashed');
});

test('a session process that dies at every start: session/new is answered session_failed once the restart intensity is spent, the log says why, and a session/new after the cause is gone works', async (t) => {
  const { env, broken } = breakableStart();
  writeFileSync(broken, '');
  // No pool: each child is spawned for the session that needs it.
  const { d, c } = await daemonWithClient(t, 'http', { script, args: ['--pool', '0'], env });
  const err: any = await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] }).catch((e) => e);
  assert.equal(err?.data?.code, 'session_failed', JSON.stringify(err));
  // The first start and three restarts (the default intensity), and no more.
  assert.equal(await d.metric('troupe_children_spawned_total'), 4);
  assert.match(d.stderr, /session child crashed .*"code":3.*"stderr":"cannot start: broken on purpose/, 'the log says why it died');
  rmSync(broken);
  const { sessionId } = await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] });
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] })).stopReason, 'end_turn');
});

test('a child over its memory budget dies, is reported as out_of_memory, and is restarted', async (t) => {
  const d = await Daemon.start({
    script: { replies: [{ when: 'hog', items: [{ hold_mb: 400 }, { text: 'never' }] }, { when: 'ping', items: [{ text: 'pong' }] }] },
    args: ['--child-memory-mb', '64'],
  });
  t.after(() => d.stop());
  const c = d.connect('http');
  t.after(() => c.close());
  await c.init();
  const sessionId = (await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })).sessionId;
  const before = (await childOf(d, sessionId)).pid;
  await assert.rejects(c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hog' }] }), (e: any) => e.data?.code === 'agent_crashed');
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] })).stopReason, 'end_turn');
  assert.notEqual((await childOf(d, sessionId)).pid, before);
  const metrics = await (await fetch(`${d.url}/metrics`, { headers: d.headers })).text();
  // Read as a scraper does: labels by name, whatever their order on the line.
  const exits = parsePrometheusText(metrics).get('troupe_child_exits_total')!.samples;
  assert.equal(exits.find((x) => x.labels.reason === 'out_of_memory' && x.labels.crashed === 'true')?.value, 1);
  assert.match(d.stderr, /exceeded its memory budget/);
});

test('a child killed while it boots for a session/new (before the request reached it) is restarted and answers it', async (t) => {
  // No pool: session/new spawns a cold child, and waits in the daemon until that child has loaded
  // its code and answered initialize. Killed as soon as it exists, it cannot have seen the request.
  const { d, c } = await daemonWithClient(t, 'http', { script, args: ['--pool', '0'] });
  let answer: { sessionId?: string; error?: any } | undefined;
  void c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] }).then(
    (r) => (answer = { sessionId: r.sessionId }),
    (error) => (answer = { error }),
  );
  let first: number | undefined;
  while (!(first = d.childPids()[0])) await new Promise((r) => setImmediate(r));
  process.kill(first, 'SIGKILL');
  await c.until(() => answer !== undefined, 'the session/new answered');
  assert.equal(answer!.error, undefined, 'served by the restarted child');
  const sessionId = answer!.sessionId!;
  const child = (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child;
  assert.notEqual(child.pid, first);
  assert.equal(child.restarts, 1);
  const done = await c.agent.request('session/prompt', { sessionId: sessionId!, prompt: [{ type: 'text', text: 'ping' }] });
  assert.equal(done.stopReason, 'end_turn');
});

test('a child that writes no protocol on stdout (a non-JSON line, a line that never ends) and floods stderr is killed for it and replaced; the daemon serves on', { timeout: 90_000 }, async (t) => {
  const home = tempDir();
  // No pool: the first child is spawned for the session/new, and misbehaves as soon as it starts.
  const d = await Daemon.start({
    script,
    home,
    args: ['--pool', '0'],
    env: { NODE_OPTIONS: `--import=${new URL('../../support/misbehaving-child.js', import.meta.url).href}`, TROUPE_MISBEHAVE: `${home}/misbehaved` },
  });
  t.after(() => d.stop());
  const c = d.connect('http');
  t.after(() => c.close());
  await c.init();
  let sessionId: string | undefined;
  void c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] }).then((r) => (sessionId = r.sessionId));
  // The daemon reads ~100 MiB of the first child's pipes, kills it and waits out a backoff: on a
  // loaded machine that takes longer than the helper's default wait.
  await c.until(() => sessionId !== undefined, 'the session/new answered', 60_000);
  assert.equal((await childOf(d, sessionId!)).restarts, 1, 'served by the child that replaced it');
  const metrics = await (await fetch(`${d.url}/metrics`, { headers: d.headers })).text();
  assert.match(metrics, /troupe_child_exits_total\{crashed="true",reason="oversized_line"\} 1\n/);
  assert.match(d.stderr, /child wrote a non-JSON line on stdout/);
  const done = await c.agent.request('session/prompt', { sessionId: sessionId!, prompt: [{ type: 'text', text: 'ping' }] });
  assert.equal(done.stopReason, 'end_turn');
});
