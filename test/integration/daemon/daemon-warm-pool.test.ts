// The warm pool: a pooled child is initialized while it waits, before any client is known, and makes
// the log of its session ahead; the client whose session takes it still gets its own capabilities
// served (they come with the session's first request), and no spare log outlives the daemon
// (spec/daemon.md §Warm pool).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { readLogFile, sessionsDir } from '../../../src/store/index.js';
import { breakableStart, Daemon, editorSession, processAlive, tempDir, waitFor } from '../../support/daemon.js';

/** The logs in a daemon's home: id, the pid of a spare's maker, and how many events each holds. */
async function logs(home: string): Promise<{ id: string; sparePid?: number; events: number }[]> {
  const dir = sessionsDir(home);
  const names = readdirSync(dir).filter((n) => /^ses_.*\.log$/.test(n));
  return Promise.all(
    names.map(async (n) => {
      const { scan, events } = await readLogFile(`${dir}/${n}`);
      return { id: n.slice(0, -4), ...(scan.header?.spare ? { sparePid: scan.header.spare.pid } : {}), events: events.length };
    }),
  );
}

const call = (name: string, input: Record<string, unknown>) => ({ tool_call: { name, input } });

// The tests at once: each has a daemon of its own, and most of their time is a daemon's waits (a
// start-up deadline, missed heartbeats, the pool resting), not the CPU.
describe('the warm pool', { concurrency: true }, () => {
  test('a pooled child initialized ahead serves the capabilities of the client whose session takes it', async (t) => {
    const d = await Daemon.start({ script: { replies: [[call('read_file', { path: 'a.txt' })], [{ text: 'read it' }]] }, env: { TROUPE_LOG: 'debug' } });
    t.after(() => d.stop());
    const deadline = Date.now() + 20_000;
    let ahead: RegExpExecArray | null;
    while (!(ahead = /pooled child initialized ahead \{"pid":(\d+)\}/.exec(d.stderr))) {
      if (Date.now() > deadline) throw new Error(`the pooled child was not initialized ahead: ${d.stderr.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const pooledPid = Number(ahead[1]);
    let spare: { id: string } | undefined;
    while (!(spare = (await logs(d.home)).find((l) => l.sparePid === pooledPid && l.events === 0))) {
      if (Date.now() > deadline) throw new Error('the pooled child made no spare log');
      await new Promise((r) => setTimeout(r, 20));
    }
    const { editor: c, sessionId, cwd, reads } = await editorSession(t, d, 'http');
    const listed = (await d.api('GET', '/v1/sessions')).json.sessions.find((s: any) => s.id === sessionId);
    assert.equal(listed?.child?.pid, pooledPid, 'the session runs in the child initialized ahead');
    assert.equal(sessionId, spare.id, 'the session lives in the log its child made ahead');
    await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
    const r = await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'read a.txt' }] });
    assert.equal(r.stopReason, 'end_turn');
    assert.deepEqual(reads, [join(cwd, 'a.txt')], 'the file was read through the client, as its capabilities asked');
    const result = c.updatesFor(sessionId, 'tool_call_update').find((u) => u.rawOutput);
    assert.match(String(result?.rawOutput?.output), /in the editor buffer/);
    c.close();
    while (!(await logs(d.home)).some((l) => l.sparePid !== undefined && l.sparePid !== pooledPid && l.events === 0)) {
      if (Date.now() > deadline + 20_000) throw new Error('the refilled pool child made no spare log');
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(await d.stop(), 0);
    const left = await logs(d.home);
    assert.deepEqual(left.map((l) => l.id), [sessionId], 'the refilled pool child removed its unused spare when it stopped');
    assert.ok(left[0]!.events > 0);
  });

  test('pooled children that die at every start: the pool stops refilling after three, says why, and fills again once a child can start', async (t) => {
    // Every `troupe acp` dies as it starts while the file `broken` exists (a cause that can go away).
    const { env, broken } = breakableStart();
    writeFileSync(broken, '');
    const d = await Daemon.start({ env });
    t.after(() => d.stop());
    await waitFor('the pool to give up', () => /3 pooled children in a row died while waiting; the warm pool stops refilling/.test(d.stderr), 60_000);
    assert.match(d.stderr, /a pooled child died while waiting; replacing it .*"code":3.*cannot start: broken on purpose/, 'each death logged with its exit and its last words');
    const spawned = await d.metric('troupe_children_spawned_total');
    assert.equal(spawned, 3);
    // Respawned at once, each death was followed by another start, for as long as the daemon ran.
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(await d.metric('troupe_children_spawned_total'), spawned, 'no child started while nothing needs one');
    // The cause gone, the next session gets a child, and the pool fills again behind it.
    rmSync(broken);
    const c = d.connect('http');
    t.after(() => c.close());
    await c.init();
    const { sessionId } = await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] });
    assert.ok(sessionId);
    await waitFor('the pool refilled', async () => (await d.metric('troupe_pool_warm')) === 1, 30_000);
  });

  /** Pids of the pooled children said to be initialized ahead (they said hello), in the order logged. */
  const initializedAhead = (stderr: string) => [...stderr.matchAll(/pooled child initialized ahead \{"pid":(\d+)\}/g)].map((m) => Number(m[1]));

  test('a pooled child that hangs before it has started is killed at the start-up deadline and replaced, never handed to a session', { timeout: 120_000 }, async (t) => {
    // Every `troupe acp` started while the file `hang` exists sleeps for good before its code loads
    // (after saying so in a file of its own): the daemon's first pooled child, and no later child.
    const dir = tempDir();
    const hang = join(dir, 'hang');
    writeFileSync(hang, '');
    const preload = join(dir, 'hang-at-start.mjs');
    writeFileSync(
      preload,
      `import { existsSync, writeFileSync } from 'node:fs';\nif (process.argv.includes('acp') && existsSync(${JSON.stringify(hang)})) { writeFileSync(${JSON.stringify(dir)} + '/hung-' + process.pid, ''); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); }\n`,
    );
    // A start-up time of 5 s (--startup-timeout-ms; 30 s by default): ample for a child that starts.
    const d = await Daemon.start({ script: { replies: [[{ text: 'pong' }]] }, args: ['--startup-timeout-ms', '5000'], env: { NODE_OPTIONS: `--import=${pathToFileURL(preload).href}`, TROUPE_LOG: 'debug' } });
    t.after(() => d.stop());
    const hungPids = () => readdirSync(dir).filter((n) => n.startsWith('hung-')).map((n) => Number(n.slice(5)));
    const [hung] = await waitFor('the pooled child to hang', () => hungPids().length > 0 && hungPids(), 30_000);
    rmSync(hang);
    // At the start-up deadline, 5 s from its spawn.
    await waitFor('the hung pooled child killed', () => !processAlive(hung!), 60_000);
    assert.equal((d.stderr.match(/a pooled child did not start within 5000 ms; killing it/g) ?? []).length, 1, d.stderr.slice(-3000));
    assert.match(d.stderr, /a pooled child died while waiting; replacing it \{"pid":\d+,"reason":"hung","saidHello":false\}/);
    await waitFor('the pool refilled with a child that started', () => initializedAhead(d.stderr).length === 1, 30_000);
    const c = d.connect('http');
    t.after(() => c.close());
    await c.init();
    const { sessionId } = await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] });
    const pid = (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.pid;
    assert.deepEqual(initializedAhead(d.stderr), [pid], 'the session runs in the pooled child that started');
    assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] })).stopReason, 'end_turn');
    assert.equal(await d.metric('troupe_child_restarts_total'), 0, 'no session child was restarted');
  });

  test('a pooled child that stops beating while it waits (SIGSTOP) is killed and replaced, never handed to a session; three in a row and the pool rests', { timeout: 90_000 }, async (t) => {
    const d = await Daemon.start({ script: { replies: [[{ text: 'pong' }]] }, args: ['--pool', '1', '--heartbeat-ms', '100', '--heartbeat-timeout-ms', '700'], env: { TROUPE_LOG: 'debug' } });
    t.after(() => d.stop());
    const stopped: number[] = [];
    for (let i = 0; i < 3; i++) {
      const pid = await waitFor(`pooled child ${i + 1} ready`, () => initializedAhead(d.stderr)[i], 30_000);
      process.kill(pid, 'SIGSTOP');
      stopped.push(pid);
      await waitFor(`pooled child ${i + 1} killed`, () => !processAlive(pid), 30_000);
    }
    assert.equal((d.stderr.match(/a pooled child missed its heartbeats; killing it/g) ?? []).length, 3, d.stderr.slice(-3000));
    assert.match(d.stderr, /3 pooled children in a row died while waiting; the warm pool stops refilling until a session needs a child \{"pid":\d+,"reason":"hung","saidHello":true\}/);
    assert.equal(await d.metric('troupe_pool_warm'), 0);
    // A session gets a child spawned for it, not one of the stopped ones, and the pool fills again.
    const c = d.connect('http');
    t.after(() => c.close());
    await c.init();
    const { sessionId } = await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] });
    assert.ok(!stopped.includes((await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.pid));
    assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] })).stopReason, 'end_turn');
    assert.equal(await d.metric('troupe_child_restarts_total'), 0, 'no session child was restarted');
    await waitFor('the pool refilled', async () => (await d.metric('troupe_pool_warm')) === 1, 30_000);
  });

  test("a session woken by another client serves that client's capabilities, not those of the client that made it", async (t) => {
    const d = await Daemon.start({ script: { replies: [[call('read_file', { path: 'a.txt' })], [{ text: 'read it' }]] }, args: ['--idle-ms', '300'] });
    t.after(() => d.stop());
    const cwd = tempDir();
    writeFileSync(join(cwd, 'a.txt'), 'on disk\n');
    // An editor that reads files through its buffers makes the session, then goes.
    const editor = d.connect('http', { readTextFile: () => ({ content: 'in the editor buffer\n' }) });
    t.after(() => editor.close());
    await editor.init({ fs: { readTextFile: true } });
    const sessionId = (await editor.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
    await editor.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
    // A client that reads no files follows the session (attached by its message) and stays.
    const other = d.connect('ws');
    t.after(() => other.close());
    await other.init({});
    await other.agent.request('_troupe/session_state', { sessionId });
    editor.close();
    await waitFor('idle stop', async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child?.state === 'idleStopped');
    // Its prompt wakes the session: the new process serves its capabilities (it reads no files), so
    // the file is read from disk, not asked of it (it would answer method not found: the read fails).
    const r = await other.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'read a.txt' }] });
    assert.equal(r.stopReason, 'end_turn');
    const result = other.updatesFor(sessionId, 'tool_call_update').find((u) => u.rawOutput);
    assert.match(String(result?.rawOutput?.output), /on disk/, JSON.stringify(result));
  });
});
