// How the daemon starts its children (spec/daemon.md §Warm pool, §Child launch): from the bundle by
// default, from the startup snapshot `npm run build` makes with --snapshot (but not under
// NODE_OPTIONS), and a pooled child's warm-up leaves nothing behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Daemon, tempDir } from '../../support/daemon.js';

const script = { replies: [{ when: 'ping', items: [{ text: 'pong' }] }] };

const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');

/** Children of a process (the daemon's pool and session children). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

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
    const [pid] = childrenOf(d.proc.pid!);
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

test('a pooled child warms up without a trace: no session, no log, no index entry, no scratch directory', async (t) => {
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
  const sessions = join(d.home, 'sessions');
  assert.deepEqual(existsSync(sessions) ? readdirSync(sessions).filter((f) => f.endsWith('.log')) : [], []);
  // And the warmed child serves its first session normally.
  await ping(d);
});
