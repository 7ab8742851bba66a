// stdin's end: every request read before it is answered, a turn is cancelled and answered so, and the
// agent exits 0. (Until 2026-12-07 the SDK closed the connection at the end of its input, and the
// requests still being served were never answered: a script piping requests lost answers silently.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { processAlive, waitFor } from '../../support/daemon.js';

const BIN = resolve('bin/troupe.js');

/** A `troupe acp` on raw pipes: what it writes, parsed, and a way to wait for a message. */
function agent(script?: unknown, extraEnv: Record<string, string> = {}, home = mkdtempSync(join(tmpdir(), 'troupe-home-'))) {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: home, TROUPE_HOME: home, TROUPE_DEMO_DELAY_MS: '0', ...extraEnv };
  if (script) {
    writeFileSync(join(home, 'script.json'), JSON.stringify(script));
    Object.assign(env, { TROUPE_MODEL: 'scripted/replay', TROUPE_SCRIPT: join(home, 'script.json') });
  }
  const proc = spawn(process.execPath, [BIN, 'acp'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const out: any[] = [];
  let stderr = '';
  let buf = '';
  const waiters = new Set<() => void>();
  proc.stderr.on('data', (d) => (stderr += d));
  proc.stdout.on('data', (d) => {
    buf += d;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      out.push(JSON.parse(buf.slice(0, nl)));
      buf = buf.slice(nl + 1);
    }
    for (const w of waiters) w();
  });
  const exited = new Promise<number | null>((r) => proc.on('close', (code) => r(code)));
  return {
    home,
    out,
    exited,
    stderr: () => stderr,
    /** Writes the messages in one write (a script's pipe), and ends stdin after them if `end`. */
    send(messages: object[], end = false) {
      const text = messages.map((m) => JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n').join('');
      if (end) proc.stdin.end(text);
      else proc.stdin.write(text);
    },
    /** The first message (already written or to come) that `match` accepts. */
    next(match: (m: any) => boolean): Promise<any> {
      return new Promise((resolve) => {
        const look = () => {
          const found = out.find(match);
          if (found) return void (waiters.delete(look), resolve(found));
        };
        waiters.add(look);
        look();
      });
    },
  };
}

const initialize = { id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } };
const answers = (out: any[]) => out.filter((m) => m.method === undefined).map((m) => [m.id, m.error ? m.error.data?.code ?? m.error.code : 'ok']);

test('requests piped in one write, then stdin closed: each is answered, and the agent exits 0', async () => {
  const a = agent();
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  // What `printf '<initialize>\n<session/list>\n…' | troupe acp` sends.
  a.send(
    [
      initialize,
      { id: 2, method: 'session/list', params: {} },
      { id: 3, method: 'session/new', params: { cwd, mcpServers: [] } },
      { id: 4, method: 'session/new', params: { cwd: 'relative', mcpServers: [] } },
      { id: 5, method: 'session/list', params: {} },
    ],
    true,
  );
  assert.equal(await a.exited, 0, a.stderr());
  // The initialize answer first; the others as each is done (they are served side by side, and
  // JSON-RPC matches answers by id).
  assert.deepEqual(answers(a.out)[0], [1, 'ok']);
  assert.deepEqual(answers(a.out).sort(), [[1, 'ok'], [2, 'ok'], [3, 'ok'], [4, 'invalid_params'], [5, 'ok']], a.stderr());
  assert.match(a.out.find((m) => m.id === 3).result.sessionId, /^ses_/);
});

test('what the agent sends after the last answer still goes out before it exits: a piped session/new\'s commands, a loaded session\'s', async () => {
  // (Until 2026-12-07 the SDK's connection closed as the last answer went out, and it refused what
  // came after: the commands a session announces the next turn of the loop were dropped.)
  const first = agent();
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  first.send([initialize, { id: 2, method: 'session/new', params: { cwd, mcpServers: [] } }], true);
  assert.equal(await first.exited, 0, first.stderr());
  const { sessionId } = first.out.find((m) => m.id === 2).result;
  const commandsOf = (out: any[]) => out.findIndex((m) => m.method === 'session/update' && m.params.sessionId === sessionId && m.params.update.sessionUpdate === 'available_commands_update');
  assert.ok(commandsOf(first.out) > first.out.findIndex((m) => m.id === 2), JSON.stringify(first.out).slice(0, 1500));
  // A session/load replays the log and announces the commands after its answer too.
  const second = agent(undefined, {}, first.home);
  second.send([initialize, { id: 2, method: 'session/load', params: { sessionId, cwd, mcpServers: [] } }], true);
  assert.equal(await second.exited, 0, second.stderr());
  assert.ok(second.out.find((m) => m.id === 2)?.result, JSON.stringify(second.out).slice(0, 1500));
  assert.ok(commandsOf(second.out) > second.out.findIndex((m) => m.id === 2), JSON.stringify(second.out).slice(0, 1500));
});

test('stdin closed while a turn runs and prompts wait behind it: each prompt is answered cancelled, every other request answered, the turn ended in the log, exit 0', async () => {
  const a = agent({ replies: [{ when: 'long', items: [{ text: 'working' }, { hang: true }] }] });
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  a.send([initialize, { id: 2, method: 'session/new', params: { cwd, mcpServers: [] } }]);
  const { sessionId } = (await a.next((m) => m.id === 2)).result;
  const prompt = (id: number, text: string) => ({ id, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text }] } });
  a.send([prompt(3, 'long')]);
  await a.next((m) => m.params?.update?.sessionUpdate === 'agent_message_chunk');
  // The turn runs (and hangs): a queued prompt, a request, then the end of input at once.
  a.send([prompt(4, 'long'), { id: 5, method: '_troupe/session_state', params: { sessionId } }, { id: 6, method: 'session/list', params: {} }], true);
  assert.equal(await a.exited, 0, a.stderr());
  const byId = new Map(a.out.filter((m) => m.method === undefined).map((m) => [m.id, m]));
  assert.deepEqual([...byId.keys()].sort(), [1, 2, 3, 4, 5, 6], JSON.stringify(a.out.slice(-6)));
  assert.equal(byId.get(3).result?.stopReason, 'cancelled', JSON.stringify(byId.get(3)));
  assert.equal(byId.get(4).result?.stopReason, 'cancelled', JSON.stringify(byId.get(4)));
  assert.equal(byId.get(5).result?.sessionId, sessionId);
  assert.equal(byId.get(6).result?.sessions.length, 1);
  const dump = spawnSync(process.execPath, [BIN, 'log', 'dump', sessionId, '--json'], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: a.home, TROUPE_HOME: a.home } });
  const ended = dump.stdout.trim().split('\n').map((l) => JSON.parse(l)).filter((e) => e.type === 'turn_completed');
  assert.deepEqual(ended.map((e) => e.stopReason), ['cancelled'], dump.stdout.slice(-800));
});

// The timeout is a hang detector: a prompt let through to its engine after the end would hang.
test('a piped prompt still waiting for its session to open as stdin closes: answered cancelled, it never runs, exit 0', { timeout: 60_000 }, async () => {
  const first = agent();
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  first.send([initialize, { id: 2, method: 'session/new', params: { cwd, mcpServers: [] } }], true);
  assert.equal(await first.exited, 0, first.stderr());
  const { sessionId } = first.out.find((m) => m.id === 2).result;
  // Another run on the same home: the prompt waits for the session machinery and the session's log.
  const a = agent({ replies: [{ when: 'long', items: [{ text: 'working' }, { hang: true }] }] }, {}, first.home);
  a.send([initialize, { id: 2, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'long' }] } }], true);
  assert.equal(await a.exited, 0, a.stderr());
  assert.equal(a.out.find((m) => m.id === 2 && m.method === undefined)?.result?.stopReason, 'cancelled', JSON.stringify(a.out));
  assert.deepEqual(a.out.filter((m) => m.method === 'session/update' && m.params.update.sessionUpdate === 'agent_message_chunk'), [], 'the turn never started');
});

test('stdin closed while the agent waits for a permission answer: the prompt is answered cancelled and the agent exits 0', async () => {
  const a = agent({ replies: [[{ tool_call: { name: 'write_file', input: { path: 'b.txt', content: 'x' } } }], [{ text: 'done' }]] });
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  a.send([initialize, { id: 2, method: 'session/new', params: { cwd, mcpServers: [] } }]);
  const { sessionId } = (await a.next((m) => m.id === 2)).result;
  a.send([{ id: 3, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'write' }] } }]);
  // Never answered: the client's input ends instead.
  await a.next((m) => m.method === 'session/request_permission');
  a.send([{ id: 4, method: 'session/list', params: {} }], true);
  assert.equal(await a.exited, 0, a.stderr());
  assert.deepEqual(answers(a.out).filter(([id]) => id === 3 || id === 4), [[3, 'ok'], [4, 'ok']]);
  assert.equal(a.out.find((m) => m.id === 3 && m.method === undefined).result.stopReason, 'cancelled');
});

// The timeout is a hang detector: the session/new would wait out the server's start timeout.
test('a piped session/new whose MCP server never starts, then stdin closed: answered without the server, which is stopped, and the agent exits 0', { timeout: 60_000 }, async () => {
  // A start timeout far longer than the test's; the session/new is still being served as stdin ends
  // (the session machinery loads), so the server's start begins after the end.
  const a = agent(undefined, { TROUPE_MCP_START_TIMEOUT_MS: '600000' });
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  const pidFile = join(cwd, 'server.pid');
  const silent = { name: 'silent', command: '/bin/sh', args: ['-c', `echo $$ > '${pidFile}'; while :; do sleep 0.05; done`], env: [] };
  a.send([initialize, { id: 2, method: 'session/new', params: { cwd, mcpServers: [silent] } }], true);
  assert.equal(await a.exited, 0, a.stderr());
  assert.match(a.out.find((m) => m.id === 2)?.result?.sessionId, /^ses_/, JSON.stringify(a.out));
  assert.match(a.stderr(), /an MCP server did not start.*its session stopped while it started/);
  // Started or not, it does not outlive the agent.
  if (existsSync(pidFile)) {
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await waitFor('the MCP server to be gone', () => !processAlive(pid));
  }
});

test('a piped request with id null, an invalid message the SDK refuses with id null, then stdin closed: the request is answered too', async () => {
  // The SDK answers a message whose id is an object with -32600 under id null; until 2026-12-07 the
  // request gate took that refusal for the answer to the session/new being served under null, ended
  // the input, and the session/new was never answered.
  const a = agent();
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  a.send([initialize, { id: null, method: 'session/new', params: { cwd, mcpServers: [] } }, { id: {}, method: 'session/list', params: {} }], true);
  assert.equal(await a.exited, 0, a.stderr());
  const underNull = a.out.filter((m) => m.method === undefined && m.id === null);
  assert.deepEqual(underNull.map((m) => (m.error ? m.error.code : 'ok')).sort(), [-32600, 'ok'].sort(), JSON.stringify(a.out));
  assert.match(underNull.find((m) => m.result)?.result.sessionId, /^ses_/);
});
