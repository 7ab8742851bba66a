// A daemon out of file descriptors (here its real open-files limit, lowered with prlimit) cannot start
// another child: the session/new that needed one is refused with capacity_exceeded and why, at once,
// instead of waiting for ever; the sessions it has go on, and once a child stops, a new session
// can be made again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { Daemon, tempDir } from '../../support/daemon.js';

/** Enough for the daemon and a dozen children (4 pipes each), far from enough for the 40 asked. */
const OPEN_FILES = 100;
const ASKED = 40;

// The timeout is a hang detector: before the fix, the refused session/new was never answered.
test('session/new past the daemon open-files limit is refused capacity_exceeded (EMFILE); existing sessions go on, and a freed child makes room', { timeout: 120_000 }, async (t) => {
  const d = await Daemon.start({ script: { replies: [{ when: 'ping', items: [{ text: 'pong' }] }] }, args: ['--pool', '0'] });
  t.after(() => d.stop());
  // Lowered once it runs: loading its code opens dozens of files at once (zod's locales), and under
  // the limit from the start the daemon itself could fail to start (seen once in a loaded run).
  execFileSync('prlimit', ['--pid', String(d.proc.pid), `--nofile=${OPEN_FILES}:${OPEN_FILES}`]);
  const c = d.connect('http');
  t.after(() => c.close());
  await c.init();
  const cwd = tempDir();
  const made: string[] = [];
  let refused: any;
  // Four at a time. A refusal must come as an answer: a session/new left waiting would hang here.
  for (let i = 0; i < ASKED && !refused; i += 4) {
    const answers = await Promise.all(Array.from({ length: 4 }, () => c.agent.request('session/new', { cwd, mcpServers: [] }).then((ok) => ok.sessionId, (err) => err)));
    for (const r of answers) {
      if (typeof r === 'string') made.push(r);
      else refused ??= r;
    }
  }
  assert.ok(refused, `all ${ASKED} sessions were made under a limit of ${OPEN_FILES} open files`);
  assert.ok(made.length > 0, 'the first sessions fit');
  assert.equal(refused.data?.code, 'capacity_exceeded', JSON.stringify(refused));
  assert.match(String(refused.data?.reason), /^E(MFILE|NFILE)$/);
  assert.match(refused.message, /too many open files/);

  // Still serving: its API, and a session it has.
  assert.equal((await fetch(`${d.url}/v1/health`)).status, 200);
  assert.equal((await c.agent.request('session/prompt', { sessionId: made[0]!, prompt: [{ type: 'text', text: 'ping' }] })).stopReason, 'end_turn');

  // Sessions closed stop their children, and their descriptors make room for a new one (a spawn
  // needs about twice a child's four pipes for a moment: three children's worth is ample).
  assert.ok(made.length > 3, `${made.length} sessions fit`);
  for (const sessionId of made.slice(-3)) await c.agent.request('session/close', { sessionId });
  const deadline = Date.now() + 10_000;
  let again: any;
  do {
    again = await c.agent.request('session/new', { cwd, mcpServers: [] }).catch((e) => e);
  } while (again?.data?.code === 'capacity_exceeded' && Date.now() < deadline && (await new Promise((r) => setTimeout(r, 100, true))));
  assert.equal(typeof again?.sessionId, 'string', JSON.stringify(again));
  assert.equal(d.proc.exitCode, null);
  assert.doesNotMatch(d.stderr, /uncaught|unhandled/i);
});
