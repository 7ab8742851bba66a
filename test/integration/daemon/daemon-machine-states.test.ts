// The machines' current states the daemon gives (GET /v1/sessions/:id `machines`, the list's
// `machines`, /inspect `states`) are those of machines that exist, with real children: a child
// killed mid-turn leaves no `running` behind once its replacement has reopened the session, an idle
// stop leaves no session or turn state, a new session and a fork are idle from the start (and a
// fork's start is not its source's), and a session that failed keeps its child's restart count
// (and is no live session for `troupe daemon status`, nor is an idle-stopped one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Daemon, daemonWithSession, processAlive, tempDir, waitFor, daemonWithClient } from '../../support/daemon.js';
import { sessionsDir } from '../../../src/store/index.js';

const script = { replies: [{ when: 'hang', items: [{ text: 'partial' }, { hang: true }] }, [{ text: 'pong' }]] };
const prompt = (text: string) => [{ type: 'text' as const, text }];

type Transition = { n: number; machine: string; state: string; event: string };
type Detail = { machines: Record<string, string>; child: { pid: number; state: string; restarts: number } | null; transitions: Transition[] };
/** The ids `troupe daemon status --json` lists as live sessions. */
const liveSessions = (d: Daemon): string[] =>
  JSON.parse(execFileSync(process.execPath, [resolve('bin/troupe.js'), 'daemon', 'status', '--json'], { env: { PATH: process.env.PATH ?? '', HOME: d.home, TROUPE_HOME: d.home }, encoding: 'utf8' })).liveSessions.map((x: { id: string }) => x.id);
const detail = async (d: Daemon, id: string): Promise<Detail> => (await d.api('GET', `/v1/sessions/${id}`)).json;

test('a child killed mid-turn: once its replacement serves the session, the session is idle with no turn, everywhere the daemon says so', async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'http', { script });
  const victim = c.agent.request('session/prompt', { sessionId, prompt: prompt('hang') });
  await c.until(() => c.updatesFor(sessionId, 'agent_message_chunk').length > 0, 'the hanging turn');
  // Killed once the turn is durable: the new process finds it open and ends it as crashed.
  await d.untilDurable(sessionId, c.updatesFor(sessionId, 'agent_message_chunk').at(-1)._meta.troupe.seq);
  const before = await detail(d, sessionId);
  assert.equal(before.machines.session, 'running');
  process.kill(before.child!.pid, 'SIGKILL');
  await assert.rejects(victim, (e: any) => e.data?.code === 'agent_crashed');
  // The new process reports its machines before it answers the resume that makes it ready.
  const after = await waitFor('the new child ready', async () => {
    const x = await detail(d, sessionId);
    return x.child?.state === 'ready' && x.child.pid !== before.child!.pid && x;
  });
  assert.deepEqual(after.machines, { session: 'idle', child: 'ready' }, 'the interrupted turn is not shown as running');
  const crash = after.transitions.findIndex((x) => x.machine === 'child' && x.event === 'EXITED');
  assert.deepEqual(after.transitions.slice(crash).filter((x) => x.machine === 'session').map((x) => `${x.state} on ${x.event}`), ['idle on init'], "the new process's session machine, from its start");
  const listed = (await d.api('GET', '/v1/sessions')).json.sessions.find((s: { id: string }) => s.id === sessionId);
  assert.deepEqual(listed.machines, { session: 'idle', child: 'ready' });
  const picture = (await d.api('GET', `/v1/sessions/${sessionId}/inspect`)).json;
  assert.equal(picture.source, 'live');
  assert.deepEqual(picture.states, { session: 'idle', child: 'ready' });
  assert.deepEqual(liveSessions(d), [sessionId], 'a live session for `troupe daemon status`');
  assert.equal(((await c.agent.request('session/prompt', { sessionId, prompt: prompt('ping') })) as { stopReason: string }).stopReason, 'end_turn');
  assert.deepEqual((await detail(d, sessionId)).machines, { session: 'idle', turn: 'done', child: 'ready' });
});

test('an idle stop leaves no session or turn state; the woken child reports its session machine from its start', async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'http', { script, args: ['--idle-ms', '300'] });
  assert.equal(((await c.agent.request('session/prompt', { sessionId, prompt: prompt('ping') })) as { stopReason: string }).stopReason, 'end_turn');
  const stopped = await waitFor('the idle stop', async () => {
    const x = await detail(d, sessionId);
    return x.machines.child === 'idleStopped' && x;
  });
  assert.deepEqual(stopped.machines, { child: 'idleStopped' }, 'no process runs the session: its machines are gone');
  // Held by the daemon (its client is attached), but no live session, by the daemon's count and by
  // `troupe daemon status`.
  assert.equal((await d.api('GET', '/v1/health')).json.sessions.live, 0);
  assert.equal((await d.api('GET', '/v1/sessions')).json.sessions.find((s: { id: string }) => s.id === sessionId).live, false);
  assert.deepEqual(liveSessions(d), []);
  const picture = (await d.api('GET', `/v1/sessions/${sessionId}/inspect`)).json;
  assert.deepEqual([picture.source, picture.states], ['live', { child: 'idleStopped' }], "not the stopped process's states");
  const seen = stopped.transitions.at(-1)!.n;
  assert.equal(((await c.agent.request('session/prompt', { sessionId, prompt: prompt('ping') })) as { stopReason: string }).stopReason, 'end_turn');
  const all: Transition[] = (await d.api('GET', `/v1/sessions/${sessionId}/transitions`)).json.transitions;
  const since = all.filter((x) => x.n > seen && x.machine === 'session').map((x) => `${x.state} on ${x.event}`);
  assert.deepEqual(since.slice(0, 2), ['idle on init', 'running on PROMPT'], "the woken process's session machine, from its start");
  assert.deepEqual((await detail(d, sessionId)).machines, { session: 'idle', turn: 'done', child: 'ready' });
});

test("a new session is idle once created; a fork's start is the fork's, not its source's", async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'http', { script });
  // Reported by the child before its session/new answer (which daemonWithSession waited for); its
  // child's state from the start too (its child became ready before the session had an id).
  assert.deepEqual((await detail(d, sessionId)).machines, { session: 'idle', child: 'ready' });
  const listed = (await d.api('GET', '/v1/sessions')).json.sessions.find((s: { id: string }) => s.id === sessionId);
  assert.deepEqual(listed.machines, { session: 'idle', child: 'ready' });
  assert.equal(((await c.agent.request('session/prompt', { sessionId, prompt: prompt('ping') })) as { stopReason: string }).stopReason, 'end_turn');
  assert.deepEqual((await detail(d, sessionId)).machines, { session: 'idle', turn: 'done', child: 'ready' });
  const fork = ((await c.agent.request('session/fork', { sessionId, cwd: tempDir(), mcpServers: [] })) as { sessionId: string }).sessionId;
  assert.deepEqual((await detail(d, sessionId)).machines, { session: 'idle', turn: 'done', child: 'ready' }, "the source's turn is still its own");
  // The fork's machines are reported by its source's process on the control channel (fd 3), its
  // answer on stdout: the daemon may read the answer first (spec/daemon.md, Current machine states).
  const forkStates = await waitFor("the fork's session machine reported", async () => {
    const machines = (await detail(d, fork)).machines;
    return machines?.session !== undefined && machines;
  });
  assert.equal(forkStates.session, 'idle');
});

test('a failed session, released, still lists its restarts', async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'http', { script, args: ['--restart-intensity', '1', '--restart-period-ms', '60000'] });
  const first = await waitFor('the child ready', async () => {
    const x = (await detail(d, sessionId)).child;
    return x?.state === 'ready' && x;
  });
  process.kill(first.pid, 'SIGKILL');
  const second = await waitFor('the restarted child', async () => {
    const x = (await detail(d, sessionId)).child;
    return x?.state === 'ready' && x.pid !== first.pid && x;
  });
  process.kill(second.pid, 'SIGKILL');
  await waitFor('failed', async () => (await detail(d, sessionId)).child?.state === 'failed');
  c.close();
  const entry = await waitFor('the session released', async () => {
    const s = (await d.api('GET', '/v1/sessions?all=1')).json.sessions.find((x: { id: string }) => x.id === sessionId);
    return (await d.metric('troupe_sessions_held')) === 0 && s;
  });
  assert.equal(entry.status, 'failed');
  assert.deepEqual([entry.child?.state, entry.child?.pid, entry.child?.restarts], ['failed', null, 1]);
  assert.deepEqual(entry.machines, { child: 'failed' });
  // Its child's record is no process: `troupe daemon status` lists no live session.
  assert.deepEqual(liveSessions(d), []);
});

test('a session/new that fails after its process began the session leaves no state of that session in the daemon', async (t) => {
  // The child's log cannot take session_created (a full disk; here the kernel's file-size limit, set
  // with prlimit on the pooled child once it has made the next session's log file): its session
  // engine had started and reported its session machine's first state, then the session/new failed
  // and the log was removed. The daemon's hub kept that state, of a session nobody was given, for
  // its lifetime: one more per failed request.
  const { d, c } = await daemonWithClient(t, 'http', { script });
  const dir = sessionsDir(d.home);
  const spare = await waitFor('the pooled child and its spare log', async () => {
    const logs = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.log')) : [];
    // Its header written: a limit below it would fail the spare, and the session/new before its engine starts.
    const size = logs.length === 1 ? statSync(join(dir, logs[0]!)).size : 0;
    return (await d.metric('troupe_pool_warm')) === 1 && size > 0 && d.childPids().length === 1 && { pid: d.childPids()[0]!, size };
  });
  execFileSync('prlimit', ['--pid', String(spare.pid), `--fsize=${spare.size}:unlimited`]);
  const failed = await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] }).catch((e: any) => e);
  assert.equal(failed?.data?.code, 'log_write_failed', JSON.stringify(failed));
  await waitFor('the failed child gone', () => !processAlive(spare.pid));
  // A session made after it, by another child: once its first states are in the daemon's feed, so
  // would the failed one's be, reported long before by a process that has exited since.
  const made = ((await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })) as { sessionId: string }).sessionId;
  const seen = await transitionsUntil(d, (x) => x.sessionId === made && x.machine === 'session');
  assert.deepEqual([...new Set(seen.map((x) => x.sessionId))], [made], 'transitions of no other session');
});

/** The daemon's transition feed (/v1/inspect/transitions) from its start, until `done` holds for one. */
async function transitionsUntil(d: Daemon, done: (t: Transition & { sessionId: string }) => boolean): Promise<(Transition & { sessionId: string })[]> {
  const abort = new AbortController();
  const res = await fetch(`${d.url}/v1/inspect/transitions?after=0`, { headers: { ...d.headers, Accept: 'text/event-stream' }, signal: abort.signal });
  const got: (Transition & { sessionId: string })[] = [];
  const decoder = new TextDecoder();
  let text = '';
  try {
    for await (const chunk of res.body!) {
      text += decoder.decode(chunk as Uint8Array, { stream: true });
      const frames = text.split('\n\n');
      text = frames.pop()!;
      for (const frame of frames) {
        const data = frame.split('\n').find((l) => l.startsWith('data: '));
        if (!frame.includes('event: transition') || !data) continue;
        const x = JSON.parse(data.slice(6));
        got.push(x);
        if (done(x)) return got;
      }
    }
    throw new Error('the feed ended');
  } finally {
    abort.abort();
  }
}
