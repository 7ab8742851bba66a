// A request withdrawn (`$/cancel_request`) while the MCP servers it named start: answered -32800
// (request_cancelled) at once, not once they have started or their start timeout has passed; the
// servers it started are stopped; a session/new leaves no session (no log, nothing listed), a
// load or resume leaves the session without them; and the agent serves later requests as before.
// Over stdio (a real `troupe acp`) and through the daemon (which relays the cancel to the child, or
// answers it itself while the child that is to take the session/new starts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { daemonWithClient, processAlive, waitFor } from '../../support/daemon.js';
import { hungServer } from '../../support/hung-mcp-server.js';

const SERVER = resolve('dist/test/support/mcp-test-server.js');
const workingServer = { name: 'test', command: process.execPath, args: [SERVER], env: [] };
const workspace = () => mkdtempSync(join(tmpdir(), 'troupe-ws-'));
// Long enough that a cancel heeded only at the timeout gets the session/new answered with a
// result (the server left out) rather than -32800; the answer is checked, not the time it took.
const START_TIMEOUT_MS = '10000';
const TIMED_OUT = /did not answer initialize within/;

type Outcome = { result: unknown } | { error: { code?: number; data?: { code?: string } }; stderrThen: string };

/**
 * Sends `method` through `agent` naming `hung`'s server, withdraws it once the server runs, and
 * returns what it was answered (with the agent's stderr as the answer came) and the server's pid.
 */
async function withdrawnWhileStarting(
  agent: { request(method: string, params: unknown, options: { cancellationSignal: AbortSignal }): Promise<unknown> },
  method: string,
  params: Record<string, unknown>,
  hung: ReturnType<typeof hungServer>,
  stderr: () => string,
  t: { after(fn: () => unknown): void },
): Promise<{ outcome: Outcome; pid: number }> {
  const cancel = new AbortController();
  const answered = agent.request(method, { ...params, mcpServers: [hung.server] }, { cancellationSignal: cancel.signal }).then(
    (result): Outcome => ({ result }),
    (error): Outcome => ({ error, stderrThen: stderr() }),
  );
  const pid = await hung.pid();
  // Should the agent leave it behind, it must not outlive the test (it holds the agent's stderr).
  t.after(() => processAlive(pid) && process.kill(pid, 'SIGKILL'));
  cancel.abort();
  return { outcome: await answered, pid };
}

function assertCancelled(outcome: Outcome): void {
  assert.ok('error' in outcome, `answered with a result, not -32800: ${JSON.stringify(outcome)}`);
  assert.deepEqual([outcome.error.code, outcome.error.data?.code], [-32800, 'request_cancelled']);
  // Answered before the start timeout fired (it never does: the start was stopped).
  assert.doesNotMatch(outcome.stderrThen, TIMED_OUT);
}

const gone = (pid: number) => waitFor(`MCP server ${pid} to exit`, () => !processAlive(pid), 10_000);
const logFiles = (home: string) => (existsSync(join(home, 'sessions')) ? readdirSync(join(home, 'sessions')).filter((n) => n.endsWith('.log')) : []);

describe('a request withdrawn while its MCP servers (or its process) start', { concurrency: 2 }, () => {
  test('session/new over stdio: answered -32800 at once, its server stopped, no session left; the agent goes on', async (t) => {
    const c = AcpChild.start({ env: { TROUPE_MCP_START_TIMEOUT_MS: START_TIMEOUT_MS }, script: { replies: [[{ text: 'hello' }]] } });
    t.after(() => c.close());
    await c.initialize();
    const cwd = workspace();
    const { outcome, pid } = await withdrawnWhileStarting(c.agent as never, 'session/new', { cwd }, hungServer(cwd), () => c.stderr, t);
    assertCancelled(outcome);
    await gone(pid);
    assert.deepEqual(logFiles(c.home), [], 'no session log is left');
    assert.deepEqual(((await c.agent.request('session/list', {})) as { sessions: unknown[] }).sessions, [], 'no session is listed');
    // Later requests are served as ever: a session with a server that starts, and a turn in it.
    const { sessionId } = (await c.agent.request('session/new', { cwd, mcpServers: [workingServer] })) as { sessionId: string };
    assert.equal((await c.prompt(sessionId, 'hi')).stopReason, 'end_turn');
    const state = (await c.agent.request('_troupe/session_state' as never, { sessionId } as never)) as { mcpServers: { name: string; state: string }[] };
    assert.deepEqual(state.mcpServers.map((s) => [s.name, s.state]), [['test', 'serving']]);
    assert.deepEqual(logFiles(c.home), [`${sessionId}.log`]);
    assert.deepEqual(c.schemaErrors, []);
  });

  test('session/new withdrawn, then the agent is stopped (SIGTERM) at once: it exits once the server it was starting has stopped', async (t) => {
    const c = AcpChild.start({ env: { TROUPE_MCP_START_TIMEOUT_MS: START_TIMEOUT_MS } });
    t.after(() => c.close());
    await c.initialize();
    const cwd = workspace();
    const { outcome, pid } = await withdrawnWhileStarting(c.agent as never, 'session/new', { cwd }, hungServer(cwd), () => c.stderr, t);
    assertCancelled(outcome);
    // The server outlives its stdin's end: its stop takes the MCP SDK's SIGTERM, after 2 s. The agent
    // exits (process.exit) once its sessions have stopped, and waits for that stop too.
    const exited = new Promise((resolve) => c.proc.once('exit', resolve));
    c.proc.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.equal(processAlive(pid), false, 'stopped before the agent exited');
  });

  test('an agent killed while a new session\'s servers start leaves no session: the next agent on the home lists none and removes the log', async (t) => {
    const c = AcpChild.start({ env: { TROUPE_MCP_START_TIMEOUT_MS: START_TIMEOUT_MS } });
    t.after(() => c.close());
    await c.initialize();
    const cwd = workspace();
    const hung = hungServer(cwd);
    void c.agent.request('session/new', { cwd, mcpServers: [hung.server] }).catch(() => undefined);
    const pid = await hung.pid();
    t.after(() => processAlive(pid) && process.kill(pid, 'SIGKILL'));
    assert.equal(logFiles(c.home).length, 1, "the new session's log is made before its servers start");
    await c.crash();
    const next = AcpChild.start({ home: c.home });
    t.after(() => next.close());
    await next.initialize();
    assert.deepEqual(((await next.agent.request('session/list', {})) as { sessions: unknown[] }).sessions, []);
    assert.deepEqual(logFiles(c.home), [], 'the log of the session never made is removed');
  });

  for (const method of ['session/load', 'session/resume'] as const) {
    test(`${method} over stdio: answered -32800 at once, its server stopped; the session stays, without it, and takes prompts`, async (t) => {
      const c = AcpChild.start({ env: { TROUPE_MCP_START_TIMEOUT_MS: START_TIMEOUT_MS }, script: { replies: [[{ text: 'one' }], [{ text: 'two' }]] } });
      t.after(() => c.close());
      await c.initialize();
      const cwd = workspace();
      const sessionId = await c.newSession(cwd);
      assert.equal((await c.prompt(sessionId, 'first')).stopReason, 'end_turn');
      const { outcome, pid } = await withdrawnWhileStarting(c.agent as never, method, { sessionId, cwd }, hungServer(cwd), () => c.stderr, t);
      assertCancelled(outcome);
      await gone(pid);
      const state = (await c.agent.request('_troupe/session_state' as never, { sessionId } as never)) as { mcpServers: unknown[] };
      assert.deepEqual(state.mcpServers, [], 'the servers of the withdrawn request are not the session\'s');
      assert.equal((await c.prompt(sessionId, 'second')).stopReason, 'end_turn');
      assert.deepEqual(c.schemaErrors, []);
    });
  }

  test('session/load withdrawn while the servers the session had stop: the ones it named never start', async (t) => {
    const c = AcpChild.start({ env: { TROUPE_MCP_START_TIMEOUT_MS: START_TIMEOUT_MS }, script: { replies: [[{ text: 'one' }]] } });
    t.after(() => c.close());
    await c.initialize();
    const cwd = workspace();
    // The session's server outlives its stdin's end and SIGTERM: its stop takes the MCP SDK 2 s + 2 s.
    const stubbornPid = join(cwd, 'stubborn.pid');
    const stubborn = { ...workingServer, name: 'stubborn', env: [{ name: 'MCP_TEST_STUBBORN', value: '1' }, { name: 'MCP_TEST_PID_FILE', value: stubbornPid }] };
    const { sessionId } = (await c.agent.request('session/new', { cwd, mcpServers: [stubborn] })) as { sessionId: string };
    const oldPid = Number(readFileSync(stubbornPid, 'utf8'));
    t.after(() => processAlive(oldPid) && process.kill(oldPid, 'SIGKILL'));
    assert.equal((await c.prompt(sessionId, 'first')).stopReason, 'end_turn');
    const hung = hungServer(cwd);
    const cancel = new AbortController();
    const replayed = c.updatesFor(sessionId, 'user_message_chunk').length;
    const load = c.agent.request('session/load', { sessionId, cwd, mcpServers: [hung.server] }, { cancellationSignal: cancel.signal }).then((r) => r, (e) => e);
    // Its replay is sent before the session's servers change: the old one is stopping, or about to.
    await c.until(() => c.updatesFor(sessionId, 'user_message_chunk').length > replayed, 'the replay');
    cancel.abort();
    const outcome: any = await load;
    assert.deepEqual([outcome.code, outcome.data?.code], [-32800, 'request_cancelled'], JSON.stringify(outcome));
    await gone(oldPid);
    // The agent's exit stops whatever the session still has: had the named server started once the
    // old one had stopped, it would have run (and written its pid) by then.
    assert.equal(await c.close(), 0);
    assert.equal(existsSync(join(cwd, 'hung.pid')), false, 'the server the withdrawn load named never started');
  });

  for (const transport of ['http', 'ws'] as const) {
    test(`session/new through the daemon (${transport}): answered -32800 at once, its server stopped, no session in the index`, async (t) => {
      // No pooled child: it would have a spare log ready (no session, but a file in the sessions directory).
      const { d, c } = await daemonWithClient(t, transport, { args: ['--pool', '0'], env: { TROUPE_MCP_START_TIMEOUT_MS: START_TIMEOUT_MS }, script: { replies: [[{ text: 'hello' }]] } });
      const cwd = workspace();
      const { outcome, pid } = await withdrawnWhileStarting(c.agent as never, 'session/new', { cwd }, hungServer(cwd), () => d.stderr, t);
      assertCancelled(outcome);
      await gone(pid);
      assert.deepEqual((await d.api('GET', '/v1/sessions')).json.sessions, [], 'no session is listed');
      await waitFor('no session log', () => logFiles(d.home).length === 0);
      // The daemon serves the next one as ever.
      const { sessionId } = (await c.agent.request('session/new', { cwd, mcpServers: [] })) as { sessionId: string };
      assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi' }] })).stopReason, 'end_turn');
    });
  }

  test('session/new through the daemon withdrawn before its process started: answered -32800 by the daemon, and that process stopped', async (t) => {
    const { d, c } = await daemonWithClient(t, 'ws', { args: ['--pool', '0'], script: { replies: [[{ text: 'hello' }]] } });
    const cwd = workspace();
    // A first session starts the spawner, and keeps its one process.
    const first = ((await c.agent.request('session/new', { cwd, mcpServers: [] })) as { sessionId: string }).sessionId;
    const [firstChild] = d.childPids();
    const spawner = d.spawnerPid()!;
    // Held stopped, the spawner starts no process: the next session/new waits in the daemon for one.
    process.kill(spawner, 'SIGSTOP');
    let outcome: unknown;
    try {
      const cancel = new AbortController();
      const answered = c.agent.request('session/new', { cwd, mcpServers: [] }, { cancellationSignal: cancel.signal }).then((r) => r, (e) => e);
      // Answered once the daemon took the session/new (a connection's messages are taken in order).
      await c.agent.request('session/list', {});
      cancel.abort();
      await c.agent.request('session/list', {});
      process.kill(spawner, 'SIGCONT');
      outcome = await answered;
    } finally {
      process.kill(spawner, 'SIGCONT');
    }
    assert.deepEqual([(outcome as any).code, (outcome as any).data?.code], [-32800, 'request_cancelled'], JSON.stringify(outcome));
    // The process started for it serves nothing: stopped, the first session's alone left.
    await waitFor('the process started for the withdrawn session/new to stop', () => d.childPids().join() === String(firstChild));
    assert.deepEqual((await d.api('GET', '/v1/sessions')).json.sessions.map((s: { id: string }) => s.id), [first]);
    // The daemon serves the next one as ever.
    const { sessionId } = (await c.agent.request('session/new', { cwd, mcpServers: [] })) as { sessionId: string };
    assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi' }] })).stopReason, 'end_turn');
  });
});
