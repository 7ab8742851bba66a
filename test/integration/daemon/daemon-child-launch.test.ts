// How the daemon starts its children (spec/daemon.md §Warm pool, §Child launch, §Warm-up): from the
// bundle by default, from the startup snapshot `npm run build` makes with --snapshot (but not under
// NODE_OPTIONS), and a pooled child's warm-up (a throwaway session with a streamed turn on the
// offline model) leaves nothing behind but the spare log of its future session (spec/event-log.md
// §6), never calls the configured model, and gives way to a real request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { ControlMessage } from '../../../src/wire/control-messages.js';
import { ControlFrameDecoder } from '../../../src/wire/control-frame.codec.js';
import { readLogFile } from '../../../src/store/index.js';
import { Daemon, tempDir } from '../../support/daemon.js';

/** The logs of a sessions directory: file name, the pid of a spare's maker, how many events. */
async function logsIn(dir: string): Promise<{ name: string; sparePid?: number; events: number }[]> {
  const names = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.log')) : [];
  return Promise.all(
    names.map(async (name) => {
      const { scan, events } = await readLogFile(join(dir, name));
      return { name, ...(scan.header?.spare ? { sparePid: scan.header.spare.pid } : {}), events: events.length };
    }),
  );
}

const script = { replies: [{ when: 'ping', items: [{ text: 'pong' }] }] };

const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');

/** CPU ticks of a process; a pooled child that stopped using CPU has finished its start-up. */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}

async function idle(pid: number): Promise<void> {
  let last = -1;
  for (let quiet = 0; quiet < 3; ) {
    const now = cpuTicks(pid);
    quiet = now === last ? quiet + 1 : 0;
    last = now;
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function pooled(d: Daemon): Promise<number> {
  for (const deadline = Date.now() + 15_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 25))) {
    const [pid] = d.childPids();
    if (pid && cmdline(pid).includes('acp')) return pid;
  }
  throw new Error('the daemon started no pooled child');
}

async function ping(d: Daemon): Promise<number> {
  const c = d.connect('http');
  try {
    await c.init();
    const sessionId = (await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })).sessionId;
    const res = await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] });
    assert.equal(res.stopReason, 'end_turn');
    assert.deepEqual(
      c.updatesFor(sessionId, 'agent_message_chunk').map((u) => u.content.text),
      ['pong'],
    );
    return (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.pid;
  } finally {
    c.close();
  }
}

test('with --snapshot children start from the startup snapshot npm run build made; by default from the bundle', async (t) => {
  assert.ok(existsSync('dist/acp-snapshot/acp.blob'), 'npm run build makes the startup snapshot on this Node');
  const d = await Daemon.start({ script, args: ['--snapshot'] });
  t.after(() => d.stop());
  const fromSnapshot = await ping(d);
  assert.ok(cmdline(fromSnapshot).includes('--snapshot-blob'), cmdline(fromSnapshot).join(' '));

  const b = await Daemon.start({ script });
  t.after(() => b.stop());
  const fromBundle = await ping(b);
  assert.ok(!cmdline(fromBundle).includes('--snapshot-blob'));
  assert.ok(cmdline(fromBundle).some((a) => a.endsWith('bin/troupe.js')));
});

test('under NODE_OPTIONS (V8 flags the snapshot was not built with, which V8 refuses) children start from the bundle', async (t) => {
  const d = await Daemon.start({ script, args: ['--snapshot'], env: { NODE_OPTIONS: '--max-semi-space-size=2' } });
  t.after(() => d.stop());
  const pid = await ping(d);
  assert.ok(!cmdline(pid).includes('--snapshot-blob'));
  assert.doesNotMatch(d.stderr, /could not start from the startup snapshot/);
});

test('a pooled child warms up without a trace: no session, no index entry, no scratch directory; only the spare log of its next session', async (t) => {
  const tmp = tempDir();
  // A scratch directory left by a child killed during its warm-up (its pid no longer exists).
  const base = (() => {
    try {
      accessSync('/dev/shm', constants.W_OK);
      return '/dev/shm';
    } catch {
      return tmp;
    }
  })();
  const dead = spawnSync(process.execPath, ['-e', '']).pid!;
  const stale = join(base, `troupe-warm-up-${dead}-test`);
  mkdirSync(join(stale, 'sessions'), { recursive: true });
  const d = await Daemon.start({ script, env: { TMPDIR: tmp } });
  t.after(() => d.stop());
  const pid = await pooled(d);
  await idle(pid);
  for (const dir of ['/dev/shm', tmp].filter(existsSync)) assert.deepEqual(readdirSync(dir).filter((f) => f.startsWith(`troupe-warm-up-${pid}-`)), [], dir);
  assert.ok(!existsSync(stale), 'the scratch directory of a dead child is swept');
  assert.deepEqual((await d.api('GET', '/v1/sessions')).json.sessions, []);
  // Only the log it made ahead for its first session: a spare, no session.
  assert.deepEqual((await logsIn(join(d.home, 'sessions'))).map((l) => ({ sparePid: l.sparePid, events: l.events })), [{ sparePid: pid, events: 0 }]);
  // And the warmed child serves its first session normally.
  await ping(d);
});

/**
 * `troupe acp --supervised` spawned as the daemon's pool does (fd 3 a pipe), on a scripted/replay
 * model whose replies are unkeyed: each is used once, so a warm-up that called the configured model
 * would shift them. Records stdout, stderr (TROUPE_LOG=debug) and the control frames.
 */
class SupervisedChild {
  readonly proc: ChildProcess;
  readonly home = tempDir();
  readonly tmp = tempDir();
  stdout = '';
  stderr = '';
  readonly frames: ControlMessage[] = [];
  private nextId = 1;

  constructor(env: Record<string, string> = {}) {
    writeFileSync(join(this.home, 'script.json'), JSON.stringify({ replies: [[{ text: 'first' }], [{ text: 'second' }]] }));
    this.proc = spawn(process.execPath, [resolve('bin/troupe.js'), 'acp', '--supervised'], {
      env: { PATH: process.env.PATH ?? '', HOME: this.home, TROUPE_HOME: this.home, TMPDIR: this.tmp, TROUPE_LOG: 'debug', TROUPE_MODEL: 'scripted/replay', TROUPE_SCRIPT: join(this.home, 'script.json'), ...env },
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    });
    this.proc.stdout!.on('data', (d) => (this.stdout += d));
    this.proc.stderr!.on('data', (d) => (this.stderr += d));
    const decoder = new ControlFrameDecoder();
    (this.proc.stdio[3] as Readable).on('data', (chunk: Buffer) => this.frames.push(...decoder.push(chunk)));
  }

  /** The fields of the first stderr line logging `message`, once it is there. */
  async logged(message: string): Promise<Record<string, unknown>> {
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
      const line = this.stderr.split('\n').find((l) => l.includes(`troupe acp: ${message}`));
      if (line) return JSON.parse(line.slice(line.indexOf('{')) || '{}');
    }
    throw new Error(`the child never logged '${message}': ${this.stderr}`);
  }

  /** Sends a request and waits for its response (messages are NDJSON lines on stdout). */
  async request(method: string, params: unknown): Promise<any> {
    const id = this.nextId++;
    (this.proc.stdin as Writable).write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 10))) {
      const reply = this.messages().find((m) => m.id === id && m.method === undefined);
      if (reply) {
        assert.equal(reply.error, undefined, JSON.stringify(reply.error));
        return reply.result;
      }
    }
    throw new Error(`no response to ${method}: ${this.stderr}`);
  }

  messages(): any[] {
    return this.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  }

  /** Scratch directories of this child's warm-up, wherever they may be. */
  scratch(): string[] {
    return ['/dev/shm', this.tmp].filter(existsSync).flatMap((dir) => readdirSync(dir).filter((f) => f.startsWith(`troupe-warm-up-${this.proc.pid}-`)));
  }

  /** A real first session: initialize, session/new, one prompt; returns its id and the reply's chunks. */
  async firstSession(): Promise<{ sessionId: string; chunks: string[] }> {
    await this.request('initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'test', version: '1' } });
    const { sessionId } = await this.request('session/new', { cwd: this.tmp, mcpServers: [] });
    const res = await this.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    assert.equal(res.stopReason, 'end_turn');
    const updates = this.messages().filter((m) => m.method === 'session/update');
    const chunks = updates.filter((m) => m.params.update.sessionUpdate === 'agent_message_chunk').map((m) => m.params.update.content.text);
    // Every line the child wrote belongs to the real session.
    for (const u of updates) assert.equal(u.params.sessionId, sessionId);
    return { sessionId, chunks };
  }

  /** Session ids the control channel has told the daemon about (events, records, transitions). */
  reportedSessions(): Set<string> {
    return new Set(this.frames.flatMap((m) => ('sessionId' in m ? [m.sessionId as string] : [])));
  }

  kill(): void {
    if (this.proc.exitCode === null) this.proc.kill('SIGKILL');
  }
}

test("a pooled child's warm-up streams turns on the offline model and leaves no trace: no output, no frame, no file but the spare log its first session takes, the configured model untouched", async (t) => {
  const child = new SupervisedChild();
  t.after(() => child.kill());
  const done = await child.logged('warm-up done');
  assert.deepEqual({ cancelledTurns: done.cancelledTurns, asked: done.asked }, { cancelledTurns: 0, asked: false });
  assert.ok((done.turns as number) > 0, 'the warm-up ran turns to their end');
  assert.equal(child.stdout, '', 'nothing on stdout');
  assert.deepEqual([...new Set(child.frames.map((m) => m.t))].sort(), ['hb', 'hello'], 'only hello and heartbeats on fd 3');
  assert.deepEqual(child.scratch(), []);
  const sessions = join(child.home, 'sessions');
  // Only the log made ahead for its first session: a spare, no session.
  const [spare, ...others] = await logsIn(sessions);
  assert.deepEqual({ sparePid: spare?.sparePid, events: spare?.events, others }, { sparePid: child.proc.pid, events: 0, others: [] });
  // The first real turn gets the configured model's first reply: the warm-up never called it.
  const { sessionId, chunks } = await child.firstSession();
  assert.deepEqual(chunks, ['first']);
  assert.deepEqual([...child.reportedSessions()], [sessionId]);
  // The session's log, and its writer's lock (spec/event-log.md §2), held by this child.
  assert.deepEqual(readdirSync(sessions).sort(), [`${sessionId}.log`, `${sessionId}.log.lock`]);
  assert.equal(spare!.name, `${sessionId}.log`, 'the first session took the spare');
});

test('a child spawned with a request already waiting (a cold start: the pool was empty) skips the warm-up', async (t) => {
  const child = new SupervisedChild();
  t.after(() => child.kill());
  // Sent at once, before the child has loaded anything, as the daemon does for a cold session/new.
  const { sessionId, chunks } = await child.firstSession();
  assert.deepEqual(chunks, ['first']);
  assert.equal((await child.logged('no warm-up')).reason, 'a request came first');
  assert.doesNotMatch(child.stderr, /warm-up (turn|done)/);
  assert.deepEqual([...child.reportedSessions()], [sessionId]);
});

test('a request that arrives during the warm-up turn is answered as usual, and the warm-up cancels its turn and stops', async (t) => {
  // Slow chunks: the warm-up turn is surely still running when the request arrives.
  const child = new SupervisedChild({ TROUPE_WARM_UP_CHUNK_DELAY_MS: '20' });
  t.after(() => child.kill());
  await child.logged('warm-up turn');
  const { sessionId, chunks } = await child.firstSession();
  assert.deepEqual(chunks, ['first']);
  const done = await child.logged('warm-up done');
  assert.equal(done.asked, true);
  assert.equal(done.cancelledTurns, 1, 'the running warm-up turn was cancelled');
  assert.ok((done.rounds as number) < 4, 'no round started after the request');
  assert.deepEqual(child.scratch(), []);
  assert.deepEqual([...child.reportedSessions()], [sessionId]);
  // The real session goes on normally after the warm-up ended.
  const res = await child.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'again' }] });
  assert.equal(res.stopReason, 'end_turn');
  assert.deepEqual(readdirSync(join(child.home, 'sessions')).sort(), [`${sessionId}.log`, `${sessionId}.log.lock`]);
});

test('a child stopped right after it booted (its stdin ended at once, as the daemon stops one) leaves no spare log and no lock file', async (t) => {
  // From the agent script and, under NODE_OPTIONS, from the ES module bundle: there the session
  // machinery is a chunk read from disk, and the stdin that ended at once is read before it has
  // loaded, so the child shuts down before its warm-up asks for the spare. Until 2026-12-07 the spare
  // was made after that shutdown had removed none, and the log and its lock outlived the process.
  for (const [from, env] of [['agent script', {}], ['bundle', { NODE_OPTIONS: '--max-semi-space-size=2' }]] as const) {
    for (let i = 0; i < 3; i++) {
      const child = new SupervisedChild(env);
      t.after(() => child.kill());
      const exited = new Promise<number | null>((r) => child.proc.on('close', (code) => r(code)));
      (child.proc.stdin as Writable).end();
      assert.equal(await exited, 0, child.stderr);
      assert.equal((await child.logged('started')).from, from);
      const sessions = join(child.home, 'sessions');
      assert.deepEqual(existsSync(sessions) ? readdirSync(sessions) : [], [], `${from} #${i}: ${child.stderr}`);
      assert.deepEqual(child.scratch(), []);
    }
  }
});
