// The MCP servers an ACP client names (stdio, which every ACP agent must support): troupe acp starts
// them for the session, the model's calls reach them as tool calls the editor shows, permission is
// asked for what the server does not mark read-only, and the servers stop with their session.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { processAlive, waitFor } from '../../support/daemon.js';
import { startHttpMcp } from '../../support/mcp-test-tools.js';

const SERVER = resolve('dist/test/support/mcp-test-server.js');
const mcpServer = (env: { name: string; value: string }[] = []) => ({ name: 'test', command: process.execPath, args: [SERVER], env });
const call = (name: string, input: Record<string, unknown> = {}) => ({ tool_call: { name, input } });
const workspace = () => mkdtempSync(join(tmpdir(), 'troupe-ws-'));
const gone = (pid: number) => waitFor(`MCP server ${pid} to exit`, () => !processAlive(pid), 5_000);

test("a session's MCP servers: calls become tool calls, permission where not read-only, stopped by session/close", async (t) => {
  const cwd = workspace();
  const web = await startHttpMcp();
  t.after(() => web.close());
  const c = AcpChild.start({
    script: {
      replies: [
        [call('mcp__test__echo', { text: 'hi' })], [{ text: 'echoed' }],
        [call('mcp__test__touch', { name: 'f.txt' })], [{ text: 'made' }],
        [call('mcp__test__env')], [{ text: 'seen' }],
        [call('mcp__web__echo', { text: 'over http' })], [{ text: 'web' }],
      ],
    },
  });
  t.after(() => c.close());
  const init = await c.initialize();
  assert.deepEqual(init.agentCapabilities?.mcpCapabilities, { http: true, sse: false });
  const servers = [
    mcpServer([{ name: 'MCP_TEST_VAR', value: 'from-client' }]),
    { type: 'http', name: 'web', url: web.url, headers: [{ name: 'Authorization', value: 'Bearer from-the-editor' }] },
    { type: 'sse', name: 'old', url: 'http://127.0.0.1:9/sse', headers: [] },
  ];
  // Typed loosely here: an sse entry is what a client may send even though troupe does not advertise it.
  const sessionId = ((await c.agent.request('session/new', { cwd, mcpServers: servers as never })) as { sessionId: string }).sessionId;

  // A read-only tool: shown as a read, run without asking.
  assert.equal((await c.prompt(sessionId, 'one')).stopReason, 'end_turn');
  const started = c.updatesFor(sessionId, 'tool_call')[0];
  assert.deepEqual([started.title, started.kind], ['echo (test)', 'read']);
  const echoed = c.updatesFor(sessionId, 'tool_call_update').at(-1);
  assert.deepEqual([echoed.status, echoed.rawOutput.output], ['completed', 'echo: hi']);
  assert.equal(c.permissions.length, 0);

  // Another: the person is asked, and the server runs in the session's cwd.
  assert.equal((await c.prompt(sessionId, 'two')).stopReason, 'end_turn');
  assert.deepEqual(c.permissions.map((p) => p.toolCall.title), ['Create a file (test)']);
  assert.ok(existsSync(join(cwd, 'f.txt')));

  // The server got the client's variables.
  assert.equal((await c.prompt(sessionId, 'three')).stopReason, 'end_turn');
  const env = JSON.parse(c.updatesFor(sessionId, 'tool_call_update').at(-1).rawOutput.output) as { MCP_TEST_VAR: string; pid: number };
  assert.equal(env.MCP_TEST_VAR, 'from-client');
  assert.ok(processAlive(env.pid));
  // The HTTP server, with the client's header.
  assert.equal((await c.prompt(sessionId, 'four')).stopReason, 'end_turn');
  assert.equal(c.updatesFor(sessionId, 'tool_call_update').at(-1).rawOutput.output, 'echo: over http');
  assert.ok(web.authorizations.includes('Bearer from-the-editor'));
  // The sse server is left out (not advertised), and said so on stderr.
  assert.match(c.stderr, /an MCP server is left out.*old/);
  // The session's state tells what its servers came to.
  const state = (await c.agent.request('_troupe/session_state' as never, { sessionId } as never)) as { mcpServers: unknown[] };
  assert.deepEqual(state.mcpServers, [
    { name: 'test', transport: 'stdio', state: 'serving', tools: 5 },
    { name: 'web', transport: 'http', state: 'serving', tools: 5 },
  ]);

  await c.agent.request('session/close', { sessionId });
  await gone(env.pid); // session/close stopped the server
  assert.deepEqual(c.schemaErrors, []);
});

test('session/load starts the servers it names for the session; another agent process, the same tools; they stop when it exits', async (t) => {
  const cwd = workspace();
  const first = AcpChild.start({ script: { replies: [[{ text: 'hello' }]] } });
  t.after(() => first.close());
  await first.initialize();
  const sessionId = await first.newSession(cwd);
  await first.prompt(sessionId, 'hello');
  await first.close();

  const second = AcpChild.start({
    home: first.home,
    script: { replies: [[call('mcp__test__env')], [{ text: 'seen' }], [call('mcp__test__echo', { text: 'x' })], [{ text: 'after' }], [call('mcp__test__env')], [{ text: 'again' }]] },
  });
  t.after(() => second.close());
  await second.initialize();
  await second.agent.request('session/load', { sessionId, cwd, mcpServers: [mcpServer()] });
  assert.equal((await second.prompt(sessionId, 'env')).stopReason, 'end_turn');
  const done = second.updatesFor(sessionId, 'tool_call_update').at(-1);
  assert.equal(done.status, 'completed');
  const { pid } = JSON.parse(done.rawOutput.output) as { pid: number };

  // Loaded again without servers: the session's servers stop, and their tools are gone.
  await second.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  await gone(pid); // the servers no longer named were stopped
  await second.prompt(sessionId, 'echo');
  const refused = second.updatesFor(sessionId, 'tool_call_update').at(-1);
  assert.equal(refused.status, 'failed');
  assert.match(refused.rawOutput.output, /no tool named "mcp__test__echo"/);

  // Named again by a resume, they start again; the agent's exit stops them.
  await second.agent.request('session/resume', { sessionId, cwd, mcpServers: [mcpServer()] });
  await second.prompt(sessionId, 'env');
  const again = second.updatesFor(sessionId, 'tool_call_update').at(-1);
  assert.equal(again.status, 'completed');
  const restarted = (JSON.parse(again.rawOutput.output) as { pid: number }).pid;
  assert.notEqual(restarted, pid);
  assert.equal(await second.close(), 0);
  await gone(restarted); // the agent stopped its servers as it exited
  assert.deepEqual(second.schemaErrors, []);
});

test('a session unloaded while idle stops its servers, and starts them again when it is next used', async (t) => {
  const c = AcpChild.start({
    env: { TROUPE_SESSION_IDLE_MS: '300' },
    script: { replies: [[call('mcp__test__env')], [{ text: 'seen' }], [call('mcp__test__env')], [{ text: 'again' }]] },
  });
  t.after(() => c.close());
  await c.initialize();
  const sessionId = ((await c.agent.request('session/new', { cwd: workspace(), mcpServers: [mcpServer()] })) as { sessionId: string }).sessionId;
  const serverPid = async () => {
    assert.equal((await c.prompt(sessionId, 'env')).stopReason, 'end_turn');
    const done = c.updatesFor(sessionId, 'tool_call_update').at(-1);
    assert.equal(done.status, 'completed', JSON.stringify(done.rawOutput));
    return (JSON.parse(done.rawOutput.output) as { pid: number }).pid;
  };
  const first = await serverPid();
  // Unloaded after 300 ms of nothing: its server stops.
  await gone(first); // the idle session’s server stopped
  const second = await serverPid();
  assert.notEqual(second, first);
});

test('a server left out (it could not start) is tried again by the next request naming it', async (t) => {
  const cwd = workspace();
  const bin = mkdtempSync(join(tmpdir(), 'troupe-mcp-bin-'));
  const launcher = join(bin, 'start-mcp');
  const c = AcpChild.start({ script: { replies: [[call('mcp__late__echo', { text: 'x' })], [{ text: 'no' }], [call('mcp__late__echo', { text: 'now' })], [{ text: 'yes' }]] } });
  t.after(() => c.close());
  await c.initialize();
  const servers = [{ name: 'late', command: launcher, args: [], env: [] }];
  const sessionId = ((await c.agent.request('session/new', { cwd, mcpServers: servers })) as { sessionId: string }).sessionId;
  assert.match(c.stderr, /an MCP server did not start.*late/);
  const state = async () => ((await c.agent.request('_troupe/session_state' as never, { sessionId } as never)) as { mcpServers: { state: string; error?: string }[] }).mcpServers;
  const [failed] = await state();
  assert.equal(failed?.state, 'failed');
  assert.match(failed?.error ?? '', /ENOENT|spawn/);
  await c.prompt(sessionId, 'first');
  assert.equal(c.updatesFor(sessionId, 'tool_call_update').at(-1).status, 'failed', 'its tools are not there');
  // The program exists now: the same list, named again, starts it.
  writeFileSync(launcher, `#!/bin/sh\nexec "${process.execPath}" "${SERVER}"\n`);
  chmodSync(launcher, 0o755);
  await c.agent.request('session/resume', { sessionId, cwd, mcpServers: servers });
  await c.prompt(sessionId, 'second');
  const done = c.updatesFor(sessionId, 'tool_call_update').at(-1);
  assert.deepEqual([done.status, done.rawOutput.output], ['completed', 'echo: now']);
  assert.deepEqual(await state(), [{ name: 'late', transport: 'stdio', state: 'serving', tools: 5 }]);
});
