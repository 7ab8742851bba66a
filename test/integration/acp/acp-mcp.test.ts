// The MCP servers an ACP client names (stdio, which every ACP agent must support, Streamable HTTP and
// HTTP+SSE): troupe acp starts or reaches them for the session, the model's calls reach them as tool
// calls the editor shows, permission is asked for what the server does not mark read-only, and the
// servers stop with their session.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type * as acp from '@agentclientprotocol/sdk';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AcpChild } from '../../support/acp-child.js';
import { processAlive, waitFor } from '../../support/daemon.js';
import { startHttpMcp, startSseMcp } from '../../support/mcp-test-tools.js';

const SERVER = resolve('dist/test/support/mcp-test-server.js');
const mcpServer = (env: { name: string; value: string }[] = []) => ({ name: 'test', command: process.execPath, args: [SERVER], env });
const call = (name: string, input: Record<string, unknown> = {}) => ({ tool_call: { name, input } });
const workspace = () => mkdtempSync(join(tmpdir(), 'troupe-ws-'));
const gone = (pid: number) => waitFor(`MCP server ${pid} to exit`, () => !processAlive(pid), 5_000);

/** A prompt whose turn ends normally; its first tool call as started, and the last update of a call. */
async function toolTurn(c: AcpChild, sessionId: string, text: string): Promise<{ started: any; done: any }> {
  assert.equal((await c.prompt(sessionId, text)).stopReason, 'end_turn');
  return { started: c.updatesFor(sessionId, 'tool_call')[0], done: c.updatesFor(sessionId, 'tool_call_update').at(-1) };
}

/** JS that writes its process's pid to `file`, whole at once (a rename), for a test waiting for the file. */
const writePid = (file: string) =>
  `{ require('node:fs').writeFileSync(${JSON.stringify(file + '.tmp')}, String(process.pid)); require('node:fs').renameSync(${JSON.stringify(file + '.tmp')}, ${JSON.stringify(file)}); }`;

/**
 * Writes to `path` a stdio MCP server that answers initialize (with `capabilities`) and nothing after,
 * and stays, as a hung server does, until stopped (its stdin's end does not stop it). `atStart`: JS
 * run first; `onMessage`: JS run for each message `msg` it reads. Returns `path`.
 */
function initializeOnlyServer(path: string, name: string, capabilities: Record<string, unknown>, js: { atStart?: string; onMessage?: string }): string {
  writeFileSync(path, `
    ${js.atStart ?? ''}
    let buffered = '';
    process.stdin.on('data', (chunk) => {
      buffered += chunk;
      let nl;
      while ((nl = buffered.indexOf('\\n')) >= 0) {
        const msg = JSON.parse(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
        ${js.onMessage ?? ''}
        if (msg.method !== 'initialize') continue;
        const result = { protocolVersion: msg.params.protocolVersion, capabilities: ${JSON.stringify(capabilities)}, serverInfo: { name: ${JSON.stringify(name)}, version: '1' } };
        process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }) + '\\n');
      }
    });
    setInterval(() => undefined, 1000);
  `);
  return path;
}

/** A session with one turn, made by an agent process that has exited since: its home and id. */
async function madeByAnotherAgent(t: { after(fn: () => unknown): void }, cwd: string): Promise<{ home: string; sessionId: string }> {
  const first = AcpChild.start({ script: { replies: [[{ text: 'hello' }]] } });
  t.after(() => first.close());
  await first.initialize();
  const sessionId = await first.newSession(cwd);
  await first.prompt(sessionId, 'hello');
  await first.close();
  return { home: first.home, sessionId };
}

// Four tests at a time: each has an agent process and servers of its own, and much of their time
// is waiting (processes starting, a session's servers starting and stopping, an idle unload).
describe('MCP servers of ACP sessions', { concurrency: 4 }, () => {
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
          [call('mcp__test__touch', { name: 7 })], [{ text: 'refused' }],
        ],
      },
    });
    t.after(() => c.close());
    const init = await c.initialize();
    assert.deepEqual(init.agentCapabilities?.mcpCapabilities, { http: true, sse: true });
    const servers = [
      mcpServer([{ name: 'MCP_TEST_VAR', value: 'from-client' }]),
      { type: 'http' as const, name: 'web', url: web.url, headers: [{ name: 'Authorization', value: 'Bearer from-the-editor' }] },
    ];
    // A type ACP does not define is refused as the bad params it is (typed loosely: a client may send it
    // all the same), and the agent serves on.
    const unknownType = { type: 'websocket', name: 'other', url: 'ws://127.0.0.1:9/mcp', headers: [] };
    await assert.rejects(c.agent.request('session/new', { cwd, mcpServers: [unknownType] as never }), (e: any) => e.code === -32602 && e.data?.mcpServers?.[0]?.type !== undefined);
    const extra = workspace();
    const sessionId = ((await c.agent.request('session/new', { cwd, additionalDirectories: [extra], mcpServers: servers })) as { sessionId: string }).sessionId;

    // A read-only tool: shown as a read, run without asking.
    const { started, done: echoed } = await toolTurn(c, sessionId, 'one');
    assert.deepEqual([started.title, started.kind], ['echo (test)', 'read']);
    assert.deepEqual([echoed.status, echoed.rawOutput.output], ['completed', 'echo: hi']);
    assert.equal(c.permissions.length, 0);

    // Another: the person is asked, and the server runs in the session's cwd.
    assert.equal((await c.prompt(sessionId, 'two')).stopReason, 'end_turn');
    assert.deepEqual(c.permissions.map((p) => p.toolCall.title), ['Create a file (test)']);
    assert.ok(existsSync(join(cwd, 'f.txt')));

    // The server got the client's variables.
    assert.equal((await c.prompt(sessionId, 'three')).stopReason, 'end_turn');
    const env = JSON.parse(c.updatesFor(sessionId, 'tool_call_update').at(-1).rawOutput.output) as { MCP_TEST_VAR: string; pid: number; roots: { uri: string }[] };
    assert.equal(env.MCP_TEST_VAR, 'from-client');
    // Its roots are the session's directories.
    assert.deepEqual(env.roots.map((r) => r.uri), [pathToFileURL(cwd).href, pathToFileURL(extra).href]);
    assert.ok(processAlive(env.pid));
    // The HTTP server, with the client's header.
    assert.equal((await c.prompt(sessionId, 'four')).stopReason, 'end_turn');
    assert.equal(c.updatesFor(sessionId, 'tool_call_update').at(-1).rawOutput.output, 'echo: over http');
    assert.ok(web.authorizations.includes('Bearer from-the-editor'));
    // Input that does not fit the tool's schema fails invalid_params, saying why, and no one is asked.
    assert.equal((await c.prompt(sessionId, 'five')).stopReason, 'end_turn');
    const refused = c.updatesFor(sessionId, 'tool_call_update').at(-1);
    assert.deepEqual([refused.status, refused.rawOutput], ['failed', { output: 'Invalid input for mcp__test__touch: "name" must be a string.', errorCode: 'invalid_params' }]);
    assert.equal(c.permissions.length, 1, 'only the valid touch was asked for');
    // The session's state tells what its servers came to.
    const state = (await c.agent.request('_troupe/session_state' as never, { sessionId } as never)) as { mcpServers: unknown[] };
    assert.deepEqual(state.mcpServers, [
      { name: 'test', transport: 'stdio', state: 'serving', tools: 6 },
      { name: 'web', transport: 'http', state: 'serving', tools: 6 },
    ]);

    await c.agent.request('session/close', { sessionId });
    await gone(env.pid); // session/close stopped the server
    assert.deepEqual(c.schemaErrors, []);
  });

  test('an SSE server (the legacy HTTP+SSE transport) serves its tools, resources and prompts with the client\'s headers; one that cannot be reached is left out, the others serve', async (t) => {
    const legacy = await startSseMcp();
    t.after(() => legacy.close());
    const down = await startSseMcp();
    await down.close(); // nothing listens on its port any more
    const c = AcpChild.start({
      script: {
        replies: [
          [call('mcp__legacy__echo', { text: 'over sse' })], [{ text: 'echoed' }],
          [call('mcp__read_resource', { server: 'legacy', uri: 'test://notes' })], [{ text: 'noted' }],
          [call('mcp__test__echo', { text: 'over stdio' })], [{ text: 'still' }],
          { when: 'Please greet Ada.', items: [{ text: 'hello Ada' }] },
        ],
      },
    });
    t.after(() => c.close());
    const init = await c.initialize();
    assert.equal(init.agentCapabilities?.mcpCapabilities?.sse, true);
    const mcpServers = [
      { type: 'sse' as const, name: 'legacy', url: legacy.url, headers: [{ name: 'Authorization', value: 'Bearer from-the-editor' }] },
      { type: 'sse' as const, name: 'down', url: down.url, headers: [] },
      mcpServer(),
    ];
    const sessionId = ((await c.agent.request('session/new', { cwd: workspace(), mcpServers })) as { sessionId: string }).sessionId;

    const { started, done } = await toolTurn(c, sessionId, 'echo');
    assert.deepEqual([started.title, started.kind], ['echo (legacy)', 'read']);
    assert.deepEqual([done.status, done.rawOutput.output], ['completed', 'echo: over sse']);
    const read = await toolTurn(c, sessionId, 'read the notes');
    assert.deepEqual([read.done.status, read.done.rawOutput.output], ['completed', 'remember the milk']);
    // The client's header reached the server on its event stream (GET) and on the messages (POST).
    const seen = (method: string) => legacy.requests.filter((r) => r.method === method).map((r) => r.authorization);
    assert.deepEqual(seen('GET'), ['Bearer from-the-editor']);
    assert.ok(seen('POST').length > 1 && seen('POST').every((a) => a === 'Bearer from-the-editor'), JSON.stringify(legacy.requests));
    // Its prompts are slash commands.
    await waitFor('the slash commands', () => c.updatesFor(sessionId, 'available_commands_update').length > 0, 5_000);
    const commands = (c.updatesFor(sessionId, 'available_commands_update').at(-1).availableCommands as acp.AvailableCommand[]).map((x) => x.name);
    assert.ok(commands.includes('mcp__legacy__greet'), commands.join());
    assert.equal((await c.prompt(sessionId, '/mcp__legacy__greet Ada')).stopReason, 'end_turn');
    assert.equal(c.updatesFor(sessionId, 'agent_message_chunk').at(-1).content.text, 'hello Ada');

    // The unreachable one is left out, said why; the stdio server serves all the same.
    assert.match(c.stderr, /an MCP server did not start.*down/);
    const other = await toolTurn(c, sessionId, 'echo again');
    assert.deepEqual([other.done.status, other.done.rawOutput.output], ['completed', 'echo: over stdio']);
    const state = (await c.agent.request('_troupe/session_state' as never, { sessionId } as never)) as { mcpServers: { name: string; error?: string }[] };
    const failed = state.mcpServers.find((s) => s.name === 'down');
    assert.match(failed?.error ?? '', /ECONNREFUSED/);
    assert.deepEqual({ ...failed, error: undefined }, { name: 'down', transport: 'sse', state: 'failed', tools: 0, error: undefined });
    assert.deepEqual(state.mcpServers.filter((s) => s.name !== 'down'), [
      { name: 'legacy', transport: 'sse', state: 'serving', tools: 6 },
      { name: 'test', transport: 'stdio', state: 'serving', tools: 6 },
    ]);

    // session/close ends its event stream.
    assert.equal(legacy.streams(), 1);
    await c.agent.request('session/close', { sessionId });
    await waitFor('the event stream to close', () => legacy.streams() === 0, 5_000);
    assert.deepEqual(c.schemaErrors, []);
  });

  test('session/load starts the servers it names for the session; another agent process, the same tools; they stop when it exits', async (t) => {
    const cwd = workspace();
    const { home, sessionId } = await madeByAnotherAgent(t, cwd);

    const second = AcpChild.start({
      home,
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

  /**
   * A prompt (`text`) sent to a session loaded from its log while its MCP server is still starting
   * (gated by a file the test creates), then `end` (a session/cancel or a session/close) before the
   * server starts. Returns the agent and the session, for what the test checks next.
   */
  async function promptWaitingForItsSession(t: { after(fn: () => unknown): void }, end: (c: AcpChild, sessionId: string) => Promise<unknown>, text = 'never') {
    const cwd = workspace();
    const { home, sessionId } = await madeByAnotherAgent(t, cwd);
    const go = join(cwd, 'GO');
    const gated = { name: 'test', command: '/bin/sh', args: ['-c', `while [ ! -e '${go}' ]; do sleep 0.02; done; exec '${process.execPath}' '${SERVER}'`], env: [] };
    const c = AcpChild.start({ home, script: { replies: [{ when: 'never', items: [{ text: 'ran anyway' }] }, { when: 'after', items: [{ text: 'after' }] }] } });
    t.after(() => c.close());
    await c.initialize();
    await c.agent.request('session/load', { sessionId, cwd, mcpServers: [gated] });
    const prompt = c.prompt(sessionId, text);
    await c.agent.request('session/list', {}); // the prompt has reached the agent
    const ended = end(c, sessionId);
    await c.agent.request('session/list', {}); // and so has the cancel or close
    writeFileSync(go, '');
    assert.equal((await prompt).stopReason, 'cancelled');
    await ended;
    assert.equal((await c.prompt(sessionId, 'after')).stopReason, 'end_turn', 'the session goes on');
    const texts = c.updatesFor(sessionId, 'agent_message_chunk').map((u) => u.content.text);
    assert.ok(!texts.includes('ran anyway'), 'the cancelled prompt never ran');
    assert.ok(texts.includes('after'));
    assert.deepEqual(c.schemaErrors, []);
    return { c, sessionId };
  }

  test('session/cancel of a prompt still waiting for its session to open (its MCP servers starting) answers it cancelled, and it never runs', async (t) => {
    await promptWaitingForItsSession(t, (c, sessionId) => c.agent.notify('session/cancel', { sessionId }));
  });

  test('session/close cancels a prompt still waiting for its session to open, as session/cancel does', async (t) => {
    await promptWaitingForItsSession(t, (c, sessionId) => c.agent.request('session/close', { sessionId }));
  });

  test('MCP times past what a timer can wait (9999999999 ms) are the longest wait, not 1 ms: servers start and calls finish; a bad value is the default, said on stderr', async (t) => {
    const cases: [string, string, RegExp][] = [
      ['TROUPE_MCP_START_TIMEOUT_MS', '9999999999', /TROUPE_MCP_START_TIMEOUT_MS is more than the longest time troupe waits; using that/],
      ['TROUPE_MCP_CALL_MAX_MS', '9999999999', /TROUPE_MCP_CALL_MAX_MS is more than the longest time troupe waits; using that/],
      ['TROUPE_MCP_CALL_MAX_MS', '-1', /TROUPE_MCP_CALL_MAX_MS is not a whole number of milliseconds of 1 or more; using the default/],
    ];
    for (const [name, value, said] of cases) {
      const env = { [name]: value };
      const c = AcpChild.start({ env, script: { replies: [[call('mcp__test__count', { n: 2, delayMs: 50 })], [{ text: 'counted' }]] } });
      t.after(() => c.close());
      await c.initialize();
      const sessionId = ((await c.agent.request('session/new', { cwd: workspace(), mcpServers: [mcpServer()] })) as { sessionId: string }).sessionId;
      const { done } = await toolTurn(c, sessionId, 'count');
      assert.deepEqual([done.status, done.rawOutput?.output], ['completed', 'counted 2'], `${JSON.stringify(env)}: ${JSON.stringify(done.rawOutput)}`);
      assert.match(c.stderr, said);
      await c.close();
    }
  });

  /** stdin ends while the session's one MCP server (`server`, which writes its pid to `pidFile`) starts. */
  async function stdinEndWhileServerStarts(t: { after(fn: () => unknown): void }, cwd: string, pidFile: string, server: acp.McpServerStdio): Promise<void> {
    // A start timeout far longer than close() waits.
    const c = AcpChild.start({ env: { TROUPE_MCP_START_TIMEOUT_MS: '600000' } });
    t.after(() => c.close());
    await c.initialize();
    const created = c.agent.request('session/new', { cwd, mcpServers: [server] }).catch(() => undefined);
    await waitFor('the MCP server to run', () => existsSync(pidFile), 10_000);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    // Should the agent leave it behind, the server must not outlive the test (it holds the agent's stderr).
    t.after(() => processAlive(pid) && process.kill(pid));
    assert.equal(await c.close(), 0, 'exited by itself at stdin end (close() kills it after 10 s)');
    await created;
    await gone(pid); // no orphan server
  }

  test("stdin closes while a session's MCP server is still starting: the agent stops the server and exits 0, without waiting for its start", async (t) => {
    const cwd = workspace();
    const pidFile = join(cwd, 'server.pid');
    // A server that never answers initialize.
    const silent = { name: 'silent', command: '/bin/sh', args: ['-c', `echo $$ > '${pidFile}.tmp' && mv '${pidFile}.tmp' '${pidFile}'; while :; do sleep 0.05; done`], env: [] };
    await stdinEndWhileServerStarts(t, cwd, pidFile, silent);
  });

  test("stdin closes while a session's MCP server that has answered initialize is still listing its tools: the agent stops it and exits 0 at once", async (t) => {
    const cwd = workspace();
    const pidFile = join(cwd, 'server.pid');
    // A server that answers initialize (it has tools and prompts) and nothing after: tools/list and
    // prompts/list never come back. It writes its pid once asked for its tools, so stdin ends mid-list.
    const script = initializeOnlyServer(join(cwd, 'lists-never.cjs'), 'lists-never', { tools: {}, prompts: {} }, { onMessage: `if (msg.method === 'tools/list') ${writePid(pidFile)}` });
    await stdinEndWhileServerStarts(t, cwd, pidFile, { name: 'lists-never', command: process.execPath, args: [script], env: [] });
  });

  test('a slash command still waiting for its session to open, then session/cancel: answered cancelled, and it never takes effect', async (t) => {
    const { c, sessionId } = await promptWaitingForItsSession(t, (c, sessionId) => c.agent.notify('session/cancel', { sessionId }), '/mode plan');
    const state: any = await c.agent.request('_troupe/session_state', { sessionId });
    assert.equal(state.mode, 'default', 'the cancelled /mode did not switch the mode');
    assert.deepEqual(c.updatesFor(sessionId, 'current_mode_update'), []);
  });

  test('a session unloaded while idle stops its servers, and starts them again when it is next used', async (t) => {
    const c = AcpChild.start({
      env: { TROUPE_SESSION_IDLE_MS: '300' },
      script: { replies: [[call('mcp__test__env')], [{ text: 'seen' }], [call('mcp__test__env')], [{ text: 'again' }]] },
    });
    t.after(() => c.close());
    await c.initialize();
    // A server slower to start than the idle time: the session is not unloaded while it starts (at
    // session/new, and when the next request opens the session again), or that request would fail.
    const slow = mcpServer([{ name: 'MCP_TEST_START_DELAY_MS', value: '700' }]);
    const sessionId = ((await c.agent.request('session/new', { cwd: workspace(), mcpServers: [slow] })) as { sessionId: string }).sessionId;
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
    assert.deepEqual(await state(), [{ name: 'late', transport: 'stdio', state: 'serving', tools: 6 }]);
  });

  test('servers left out at start are stopped in the background: the request is answered once they are left out, not once they have stopped; the agent still stops them before it exits', async (t) => {
    const cwd = workspace();
    const pidOf = (name: string) => join(cwd, `${name}.pid`);
    // Never answers initialize, outlives its stdin's end and ignores SIGTERM: the MCP SDK stops it
    // with SIGKILL only after 2 s + 2 s.
    const stubborn = join(cwd, 'stubborn.cjs');
    writeFileSync(stubborn, `process.on('SIGTERM', () => undefined); ${writePid(pidOf('stubborn'))} setInterval(() => undefined, 1000);`);
    // Answers initialize, then never tools/list (left out as not listed), and outlives its stdin's end.
    const unlisted = initializeOnlyServer(join(cwd, 'unlisted.cjs'), 'unlisted', { tools: {} }, { atStart: writePid(pidOf('unlisted')) });
    const c = AcpChild.start({ env: { TROUPE_MCP_START_TIMEOUT_MS: '1000' } });
    t.after(() => c.close());
    await c.initialize();
    const mcpServers = [
      { name: 'stubborn', command: process.execPath, args: [stubborn], env: [] },
      { name: 'unlisted', command: process.execPath, args: [unlisted], env: [] },
    ];
    const { sessionId } = (await c.agent.request('session/new', { cwd, mcpServers })) as { sessionId: string };
    const pids = await Promise.all(['stubborn', 'unlisted'].map((name) => waitFor(`${name} to run`, () => existsSync(pidOf(name)) && Number(readFileSync(pidOf(name), 'utf8')))));
    // Should the agent leave one behind, it must not outlive the test (it holds the agent's stderr).
    t.after(() => pids.forEach((pid) => processAlive(pid) && process.kill(pid, 'SIGKILL')));
    // Until 2026-12-07 session/new was answered only once both had stopped, the stubborn one 4 s
    // after its start timeout: the request waited on a stop that could change nothing in its answer.
    assert.deepEqual(pids.map(processAlive), [true, true], 'answered while the servers left out were still being stopped');
    const { mcpServers: status } = (await c.agent.request('_troupe/session_state' as never, { sessionId } as never)) as { mcpServers: { name: string; state: string; error?: string }[] };
    assert.deepEqual(status.map((s) => [s.name, s.state]), [['stubborn', 'failed'], ['unlisted', 'failed']]);
    assert.match(status[0]!.error ?? '', /did not answer initialize within 1000 ms/);
    assert.match(status[1]!.error ?? '', /did not list its tools/);
    // The agent's exit waits for their stop, on SIGTERM too (process.exit once its sessions have
    // stopped): neither outlives it.
    const exited = new Promise((resolve) => c.proc.once('exit', resolve));
    c.proc.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.deepEqual(pids.map(processAlive), [false, false], 'stopped before the agent exited');
  });

  test("an MCP server's prompts are the session's slash commands: announced, made into the turn's prompt by the server, refused clearly", async (t) => {
    const cwd = workspace();
    const c = AcpChild.start({
      script: {
        replies: [
          { when: 'Please greet Ada in a very formal way.', items: [{ text: 'greeted Ada formally' }] },
          { when: 'Please greet Bob Smith.', items: [{ text: 'greeted Bob' }] },
          { when: 'Assistant: We wrote the recap tests.', items: [{ text: 'recapped' }] },
        ],
      },
    });
    t.after(() => c.close());
    await c.initialize();
    const sessionId = ((await c.agent.request('session/new', { cwd, mcpServers: [mcpServer()] })) as { sessionId: string }).sessionId;
    await waitFor('the slash commands', () => c.updatesFor(sessionId, 'available_commands_update').length > 0, 5_000);
    const commands = c.updatesFor(sessionId, 'available_commands_update').at(-1).availableCommands as acp.AvailableCommand[];
    assert.deepEqual(commands.map((x) => x.name), ['compact', 'mode', 'model', 'mcp__test__greet', 'mcp__test__recap']);
    const greet = commands.find((x) => x.name === 'mcp__test__greet')!;
    assert.deepEqual(greet.input, { hint: 'name [style]' });
    assert.match(greet.description, /Asks for a greeting.*"greet".*"test"/);
    assert.equal(commands.find((x) => x.name === 'mcp__test__recap')!.input, undefined);
    const reply = () => c.updatesFor(sessionId, 'agent_message_chunk').map((u) => u.content.text).join('');
    const said = async (text: string) => {
      const before = reply().length;
      assert.equal((await c.prompt(sessionId, text)).stopReason, 'end_turn');
      return reply().slice(before);
    };

    // The words fill the arguments in order, the last takes the rest; or they are named.
    assert.equal(await said('/mcp__test__greet Ada very formal'), 'greeted Ada formally');
    assert.equal(await said('/mcp__test__greet name="Bob Smith"'), 'greeted Bob');
    // Several messages: the assistant's is kept, marked as such.
    assert.equal(await said('/mcp__test__recap'), 'recapped');

    // A missing argument, an unknown command, input for a prompt that takes none: clear errors, no turn.
    const refused = (text: string, pattern: RegExp) => assert.rejects(c.prompt(sessionId, text), (e: any) => e.code === -32602 && pattern.test(e.message));
    await refused('/mcp__test__greet', /\/mcp__test__greet needs name: \/mcp__test__greet name \[style\]/);
    await refused('/mcp__test__nope hi', /no command \/mcp__test__nope \(the session's MCP commands: \/mcp__test__greet, \/mcp__test__recap\)/);
    await refused('/mcp__test__recap now', /\/mcp__test__recap takes no input/);
    assert.equal(reply(), 'greeted Ada formallygreeted Bobrecapped');
    assert.deepEqual(c.schemaErrors, []);
  });

  test('a session loaded from its log tells its MCP commands once its servers have started', async (t) => {
    const cwd = workspace();
    const { home, sessionId } = await madeByAnotherAgent(t, cwd);
    const second = AcpChild.start({ home, script: { replies: [{ when: 'Please greet Cy.', items: [{ text: 'hi Cy' }] }] } });
    t.after(() => second.close());
    await second.initialize();
    await second.agent.request('session/load', { sessionId, cwd, mcpServers: [mcpServer()] });
    const names = () => (second.updatesFor(sessionId, 'available_commands_update').at(-1)?.availableCommands ?? []).map((x: acp.AvailableCommand) => x.name);
    await waitFor('the MCP commands', () => names().includes('mcp__test__greet'), 10_000);
    assert.equal((await second.prompt(sessionId, '/mcp__test__greet Cy')).stopReason, 'end_turn');
    assert.equal(second.updatesFor(sessionId, 'agent_message_chunk').at(-1).content.text, 'hi Cy');
  });

  test('a server that adds a prompt while it runs: the client is told the new commands', async (t) => {
    const c = AcpChild.start({ script: { replies: [] } });
    t.after(() => c.close());
    await c.initialize();
    const servers = [mcpServer([{ name: 'MCP_TEST_LATE_PROMPT_MS', value: '500' }])];
    const sessionId = ((await c.agent.request('session/new', { cwd: workspace(), mcpServers: servers })) as { sessionId: string }).sessionId;
    const names = () => (c.updatesFor(sessionId, 'available_commands_update').at(-1)?.availableCommands ?? []).map((x: acp.AvailableCommand) => x.name);
    await waitFor('the late prompt among the commands', () => names().includes('mcp__test__late'), 10_000);
    assert.deepEqual(names(), ['compact', 'mode', 'model', 'mcp__test__greet', 'mcp__test__recap', 'mcp__test__late']);
    assert.deepEqual(c.schemaErrors, []);
  });

  test("the model reads a server's resources with mcp__read_resource, shown as a read and never asked", async (t) => {
    const c = AcpChild.start({ script: { replies: [[call('mcp__read_resource', { server: 'test', uri: 'test://notes' })], [{ text: 'noted' }]] } });
    t.after(() => c.close());
    await c.initialize();
    const sessionId = ((await c.agent.request('session/new', { cwd: workspace(), mcpServers: [mcpServer()] })) as { sessionId: string }).sessionId;
    const { started, done } = await toolTurn(c, sessionId, 'read the notes');
    assert.deepEqual([started.title, started.kind], ['Read test://notes (test)', 'read']);
    assert.deepEqual([done.status, done.rawOutput.output], ['completed', 'remember the milk']);
    assert.equal(c.permissions.length, 0);
    assert.deepEqual(c.schemaErrors, []);
  });
});
