// A session's MCP servers under the daemon: its child starts them (or reaches them: an SSE server),
// and a child started again after a crash, or for a session released at rest, resumes the session
// with them, so the model keeps its tools. The crashed child's server does not outlive it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { childPidsOf, Daemon, daemonWithSession, processAlive, tempDir, waitFor, daemonWithClient, type AcpClient } from '../../support/daemon.js';
import { startSseMcp } from '../../support/mcp-test-tools.js';

const SERVER = resolve('dist/test/support/mcp-test-server.js');
const script = {
  replies: [
    { when: 'env', items: [{ tool_call: { name: 'mcp__test__env', input: {} } }] },
    { when: 'hello', items: [{ text: 'hi' }] },
    { when: 'over sse', items: [{ tool_call: { name: 'mcp__legacy__echo', input: { text: 'through the daemon' } } }] },
    // Tool results are answered by the unkeyed replies, in order (each child process reads the script anew).
    [{ text: 'seen' }],
    [{ text: 'seen' }],
  ],
};

/** Runs the test MCP server's `env` tool in a turn of `sessionId`: what the server's environment says, and its pid. */
async function serverEnvOf(c: AcpClient, sessionId: string) {
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'env' }] })).stopReason, 'end_turn');
  const done = c.updatesFor(sessionId, 'tool_call_update').at(-1);
  assert.equal(done.status, 'completed', JSON.stringify(done.rawOutput));
  return JSON.parse(done.rawOutput.output) as { MCP_TEST_VAR: string | null; pid: number };
}

/** A daemon and one client whose session has the test MCP server; `serverEnv()` runs its `env` tool in a turn. */
async function mcpSession(t: { after(f: () => unknown): void }, transport: 'http' | 'ws', env: { name: string; value: string }[]) {
  const d = await Daemon.start({ script });
  t.after(() => d.stop());
  const c = d.connect(transport);
  t.after(() => c.close());
  await c.init();
  const mcpServers = [{ name: 'test', command: process.execPath, args: [SERVER], env }];
  const sessionId = ((await c.agent.request('session/new', { cwd: tempDir(), mcpServers })) as { sessionId: string }).sessionId;
  const serverEnv = () => serverEnvOf(c, sessionId);
  return { d, sessionId, serverEnv };
}

test('a child started again after a crash resumes its session with the same MCP servers', async (t) => {
  const { d, sessionId, serverEnv } = await mcpSession(t, 'http', [{ name: 'MCP_TEST_VAR', value: 'daemon' }]);
  const serverPid = async () => {
    const seen = await serverEnv();
    assert.equal(seen.MCP_TEST_VAR, 'daemon');
    return seen.pid;
  };
  const first = await serverPid();
  const child = (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.pid as number;
  process.kill(child, 'SIGKILL');
  await waitFor('the crashed child’s MCP server to exit', () => !processAlive(first));
  await waitFor('the restarted child', async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.restarts === 1);
  const second = await serverPid();
  assert.notEqual(second, first, 'the new child started the server again');
});

test('the MCP server of a child that was killed is stopped by the daemon, even one that outlives its stdin and ignores SIGTERM', async (t) => {
  const { d, sessionId, serverEnv } = await mcpSession(t, 'http', [{ name: 'MCP_TEST_STUBBORN', value: '1' }]);
  const { pid } = await serverEnv();
  t.after(() => processAlive(pid) && process.kill(pid, 'SIGKILL'));
  const child = (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.pid as number;
  process.kill(child, 'SIGKILL');
  await waitFor('the dead child’s MCP server to be stopped', () => !processAlive(pid));
});

test('another client resuming the session without naming servers (the CLI) leaves them running', async (t) => {
  const { d, sessionId, serverEnv } = await mcpSession(t, 'ws', []);
  const serverPid = async () => (await serverEnv()).pid;
  const before = await serverPid();
  // `troupe run --session` resumes the session through the daemon, as a second client.
  const cli = await promisify(execFile)(process.execPath, [resolve('bin/troupe.js'), 'run', '--session', sessionId, 'hello'], {
    env: { PATH: process.env.PATH, HOME: tempDir(), TROUPE_URL: d.url, TROUPE_TOKEN: d.token, NO_COLOR: '1' },
  });
  assert.match(cli.stdout, /hi/);
  assert.ok(processAlive(before), 'the server still runs');
  assert.equal(await serverPid(), before, 'and serves the session as before');
});

test('a child stopped idle while its client stays attached starts the session\'s MCP servers again for the next prompt', async (t) => {
  const { d, c } = await daemonWithClient(t, 'http', { script, args: ['--idle-ms', '300'] });
  const mcpServers = [{ name: 'test', command: process.execPath, args: [SERVER], env: [{ name: 'MCP_TEST_VAR', value: 'woken' }] }];
  const sessionId = ((await c.agent.request('session/new', { cwd: tempDir(), mcpServers })) as { sessionId: string }).sessionId;
  const serverEnv = () => serverEnvOf(c, sessionId);
  const first = await serverEnv();
  // The client stays attached: the daemon keeps the session and only its process stops.
  await waitFor('the child stopped idle', async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.state === 'idleStopped');
  await waitFor('its MCP server stopped with it', () => !processAlive(first.pid));
  const second = await serverEnv();
  assert.equal(second.MCP_TEST_VAR, 'woken', 'the server the client named serves the session again');
  assert.notEqual(second.pid, first.pid);
  assert.equal((await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.wakes, 1, 'woken, not restarted');
});

test('a request whose servers the child refuses changes nothing: a child started again later keeps the servers the session has', async (t) => {
  const { d, c } = await daemonWithClient(t, 'ws', { script, args: ['--idle-ms', '300'] });
  const cwd = tempDir();
  const good = { name: 'test', command: process.execPath, args: [SERVER], env: [{ name: 'MCP_TEST_VAR', value: 'kept' }] };
  const sessionId = ((await c.agent.request('session/new', { cwd, mcpServers: [good] })) as { sessionId: string }).sessionId;
  // Two servers of one name: the child refuses the request, and the session keeps its server.
  await assert.rejects(c.agent.request('session/resume', { sessionId, cwd, mcpServers: [good, good] }), (e: any) => e.code === -32602 && /two MCP servers are named "test"/.test(e.message));
  await waitFor('the child stopped idle', async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.state === 'idleStopped');
  // The next prompt wakes a child, which resumes the session with the servers it has.
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'env' }] })).stopReason, 'end_turn');
  const done = c.updatesFor(sessionId, 'tool_call_update').at(-1);
  assert.equal(done.status, 'completed', JSON.stringify(done.rawOutput));
  assert.equal(JSON.parse(done.rawOutput.output).MCP_TEST_VAR, 'kept');
  assert.equal((await d.api('GET', `/v1/sessions/${sessionId}`)).json.status === 'failed', false);
});

test('a session released at rest keeps its MCP servers for a client that resumes it without naming them; servers slower to start than the idle stop hold it off', async (t) => {
  const d = await Daemon.start({ script, args: ['--idle-ms', '300'] });
  t.after(() => d.stop());
  const cwd = tempDir();
  const first = d.connect('http');
  await first.init();
  // The server takes 700 ms to start, longer than the idle stop: the session/new (and the revival's
  // resume) waiting on it must keep the child from being stopped as idle.
  const env = [{ name: 'MCP_TEST_VAR', value: 'kept' }, { name: 'MCP_TEST_START_DELAY_MS', value: '700' }];
  const mcpServers = [{ name: 'test', command: process.execPath, args: [SERVER], env }];
  const sessionId = ((await first.agent.request('session/new', { cwd, mcpServers })) as { sessionId: string }).sessionId;
  first.close();
  // Its client gone and its child stopped idle, the daemon holds nothing of the session.
  await waitFor('the session released', async () => (await d.metric('troupe_sessions_held')) === 0);
  const back = d.connect('ws');
  t.after(() => back.close());
  await back.init();
  await back.agent.request('session/resume', { sessionId, cwd });
  assert.equal((await back.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'env' }] })).stopReason, 'end_turn');
  const done = back.updatesFor(sessionId, 'tool_call_update').at(-1);
  assert.equal(done.status, 'completed', JSON.stringify(done.rawOutput));
  assert.equal(JSON.parse(done.rawOutput.output).MCP_TEST_VAR, 'kept', 'the server the first client named serves the session again');
});

test('a restarted daemon has forgotten the servers (no file of its home holds their env) until a client\'s session/load names them again', async (t) => {
  const secret = `secret-${process.pid}-${Date.now()}`;
  // At debug level, the most the daemon and its children write to $TROUPE_HOME.
  const first = await Daemon.start({ script, env: { TROUPE_LOG: 'debug' } });
  t.after(() => first.stop());
  const c1 = first.connect('http');
  await c1.init();
  const cwd = tempDir();
  const mcpServers = [{ name: 'test', command: process.execPath, args: [SERVER], env: [{ name: 'MCP_TEST_VAR', value: 'named' }, { name: 'MCP_TEST_TOKEN', value: secret }] }];
  const sessionId = ((await c1.agent.request('session/new', { cwd, mcpServers })) as { sessionId: string }).sessionId;
  assert.equal((await c1.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'env' }] })).stopReason, 'end_turn');
  assert.equal(JSON.parse(c1.updatesFor(sessionId, 'tool_call_update').at(-1).rawOutput.output).MCP_TEST_VAR, 'named');
  c1.close();
  await first.stop();
  // The servers' env (and an http server's headers) may be credentials: kept in memory only. (The
  // env tool's output shows MCP_TEST_VAR, which the log keeps as the model saw it; never the token.)
  const holding = readdirSync(first.home, { recursive: true, encoding: 'utf8' }).filter((f) => {
    const path = join(first.home, f);
    return statSync(path).isFile() && readFileSync(path).includes(secret);
  });
  assert.deepEqual(holding, [], 'no file of $TROUPE_HOME holds a server\'s env');
  assert.ok(first.stderr.length > 0 && !first.stderr.includes(secret), 'nor the daemon\'s log');
  const { d, c } = await daemonWithClient(t, 'ws', { script, home: first.home });
  const envCall = async () => {
    assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'env' }] })).stopReason, 'end_turn');
    return c.updatesFor(sessionId, 'tool_call_update').at(-1);
  };
  await c.agent.request('session/resume', { sessionId, cwd });
  const forgotten = await envCall();
  assert.equal(forgotten.status, 'failed', 'resumed without naming them, the session has no server');
  assert.match(JSON.stringify(forgotten.rawOutput), /unknown_tool|There is no tool named/);
  await c.agent.request('session/load', { sessionId, cwd, mcpServers });
  const named = await envCall();
  assert.equal(named.status, 'completed', JSON.stringify(named.rawOutput));
  assert.equal(JSON.parse(named.rawOutput.output).MCP_TEST_VAR, 'named', 'the servers a session/load names serve it');
});

test('a fork made through the daemon gets a child of its own, with the servers it named; the source child lets go of its copy', async (t) => {
  const { d, c, sessionId, cwd } = await daemonWithSession(t, 'ws', { script });
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] })).stopReason, 'end_turn');
  const source = (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.pid as number;
  const mcpServers = [{ name: 'test', command: process.execPath, args: [SERVER], env: [{ name: 'MCP_TEST_VAR', value: 'forked' }] }];
  const forked = ((await c.agent.request('session/fork' as never, { sessionId, cwd, mcpServers } as never)) as { sessionId: string }).sessionId;
  // The source child made the fork, with its server: it unloads it, and the server goes with it.
  await waitFor('the source child to let go of the fork', () => childPidsOf(source).length === 0);
  assert.equal((await c.agent.request('session/prompt', { sessionId: forked, prompt: [{ type: 'text', text: 'env' }] })).stopReason, 'end_turn');
  const done = c.updatesFor(forked, 'tool_call_update').at(-1);
  assert.equal(done.status, 'completed', JSON.stringify(done.rawOutput));
  assert.equal(JSON.parse(done.rawOutput.output).MCP_TEST_VAR, 'forked', 'the fork\'s own child runs the server the fork named');
  const own = (await d.api('GET', `/v1/sessions/${forked}`)).json.child.pid as number;
  assert.notEqual(own, source);
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] })).stopReason, 'end_turn', 'the source session goes on');
});

test('the daemon advertises SSE MCP servers as its children do, and a session reaches one through its child', async (t) => {
  const legacy = await startSseMcp();
  t.after(() => legacy.close());
  const d = await Daemon.start({ script });
  t.after(() => d.stop());
  const c = d.connect('http');
  t.after(() => c.close());
  // The daemon answers initialize itself, before any child exists.
  const init = await c.agent.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
  assert.deepEqual(init.agentCapabilities?.mcpCapabilities, { http: true, sse: true });
  const mcpServers = [{ type: 'sse' as const, name: 'legacy', url: legacy.url, headers: [{ name: 'Authorization', value: 'Bearer via-daemon' }] }];
  const sessionId = ((await c.agent.request('session/new', { cwd: tempDir(), mcpServers })) as { sessionId: string }).sessionId;
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'over sse' }] })).stopReason, 'end_turn');
  const done = c.updatesFor(sessionId, 'tool_call_update').at(-1);
  assert.deepEqual([done.status, done.rawOutput.output], ['completed', 'echo: through the daemon']);
  assert.ok(legacy.requests.length > 1 && legacy.requests.every((r) => r.authorization === 'Bearer via-daemon'), JSON.stringify(legacy.requests));
});
