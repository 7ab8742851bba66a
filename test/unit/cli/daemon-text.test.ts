// What a daemon answers is a peer's text (TROUPE_URL may name a remote one, and a session's fields
// come from its agent): every command spells out the control characters of every field it prints,
// not only titles and paths. Each command runs in-process against a fake management API whose
// every string field carries an escape sequence.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { steerCommand } from '../../../src/cli/control.command.js';
import { daemonCommand } from '../../../src/cli/daemon.command.js';
import { inspectCommand } from '../../../src/cli/inspect.command.js';
import { sessionsCommand } from '../../../src/cli/sessions.command.js';
import { watchCommand } from '../../../src/cli/watch.command.js';
import { fakeManagementApi, type FakeApi } from '../../support/cli/fake-management-api.js';

/** A raw control character (a line break aside): what must never reach the terminal. */
const RAW_CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;
/** An OSC that retitles the terminal, and a C1 CSI. */
const X = '\x1b]0;owned\x07';
const C1 = '\x9b2J';
/** How they are spelled out. */
const X_SHOWN = '\\x1b]0;owned\\x07';

const ID = 'ses_0evil';
const child = { state: `running${X}`, pid: 42, restarts: 0, wakes: 0 };
const summary = {
  id: `${ID}${X}`,
  cwd: '/w',
  title: 'a title',
  model: `scripted/demo${X}`,
  mode: `plan${C1}`,
  createdAt: 0,
  updatedAt: 0,
  status: `active${X}`,
  lastSeq: 3,
  child,
  connections: 1,
  live: true,
};
const detail = {
  ...summary,
  turnId: `turn_1${X}`,
  machines: { session: `running${X}`, turn: { step: `tool${C1}` } },
  transitions: [{ machine: `turn${X}`, state: `done${C1}`, event: `go${X}`, at: 0 }],
};
const events = [
  { seq: 1, ts: 0, sessionId: ID, type: `session_created${X}`, cwd: '/w', model: 'm', mode: 'default' },
  { seq: 2, ts: 0, sessionId: ID, type: 'tool_call_started', toolCallId: 't', title: 'ls', kind: `execute${X}`, status: `pending${C1}` },
  { seq: 3, ts: 0, sessionId: ID, type: 'turn_completed', turnId: 't1', stopReason: `end_turn${X}` },
];
const picture = {
  session: { ...summary, id: ID },
  source: 'live',
  states: { session: `running${X}`, turn: `step${C1}`, child: 'up' },
  transitions: [{ machine: 'turn', state: `done${X}`, event: `go${C1}`, at: 0, seq: 2, cause: `why${X}` }],
  mermaid: { session: `stateDiagram-v2\n  a --> b${X}\n`, turn: `stateDiagram-v2\n  c${C1}\n`, child: 'stateDiagram-v2\n' },
};

let api: FakeApi;
before(async () => {
  api = await fakeManagementApi({
    'GET /v1/health': { version: `9.9.9${X}`, uptimeMs: 1000, sessions: { live: 1, total: 1 } },
    'GET /v1/sessions': { sessions: [summary] },
    [`GET /v1/sessions/${ID}`]: detail,
    [`GET /v1/sessions/${ID}/events?after=0`]: (_req: unknown, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(events.map((e) => `id: ${e.seq}\nevent: event\ndata: ${JSON.stringify(e)}\n\n`).join(''));
    },
    [`GET /v1/sessions/${ID}/inspect?last=20`]: picture,
    [`POST /v1/sessions/${ID}/steer`]: { steerId: `st_1${X}`, turnId: `turn_1${X}` },
    'POST /v1/login-codes': { code: 'c', url: `http://x/login?c${X}` },
  });
});
after(() => api.close());

/** Runs a command; asserts it succeeded and printed no raw control character; what it printed. */
async function shown(command: Parameters<FakeApi['run']>[0], args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  const r = await api.run(command, args, env);
  assert.equal(r.code, 0, r.stderr);
  const all = r.stdout + r.stderr;
  // Until 2026-12-06 each of these commands printed some of these fields raw.
  assert.ok(!RAW_CONTROL.test(all), `raw control characters from ${args.join(' ')}: ${JSON.stringify(all)}`);
  return all;
}

test('sessions: the id, status and process state of each session', async () => {
  const out = await shown(sessionsCommand, []);
  assert.ok(out.includes(`${ID}${X_SHOWN}`), out);
  assert.ok(out.includes(`active${X_SHOWN}`), out);
  assert.ok(out.includes(`running${X_SHOWN}`), out);
});

test('sessions show: id, status, model, mode, process, machines and transitions', async () => {
  const out = await shown(sessionsCommand, ['show', ID]);
  for (const s of [`${ID}${X_SHOWN}`, `active${X_SHOWN}`, `scripted/demo${X_SHOWN}`, 'plan\\x9b2J', `running${X_SHOWN} (pid 42)`, 'tool\\x9b2J', `turn${X_SHOWN} → done\\x9b2J  (go${X_SHOWN})`]) {
    assert.ok(out.includes(s), `${s} in ${out}`);
  }
});

test("watch: an event's type, a tool call's kind and status, a stop reason", async () => {
  const out = await shown(watchCommand, [ID, '--no-follow']);
  for (const s of [`session_created${X_SHOWN}`, `(execute${X_SHOWN}, pending\\x9b2J)`, `end_turn${X_SHOWN}`]) assert.ok(out.includes(s), `${s} in ${out}`);
});

test('inspect: statuses, states, transitions and the Mermaid text; the login URL', async () => {
  const out = await shown(inspectCommand, [ID]);
  for (const s of [`active${X_SHOWN}`, `running${X_SHOWN}`, 'step\\x9b2J', `done${X_SHOWN}`, 'go\\x9b2J', `why${X_SHOWN}`, `a --> b${X_SHOWN}\n`]) assert.ok(out.includes(s), `${s} in ${out}`);
  const mermaid = await shown(inspectCommand, [ID, '--mermaid', '--machine', 'turn']);
  assert.equal(mermaid, 'stateDiagram-v2\n  c\\x9b2J\n');
  const login = await shown(inspectCommand, ['--url']);
  assert.ok(login.startsWith(`http://x/login?c${X_SHOWN}\n`), login);
});

test('daemon status: the version, and the id and process state of each live session', async () => {
  const out = await shown(daemonCommand, ['status']);
  for (const s of [`troupe daemon 9.9.9${X_SHOWN}`, `${ID}${X_SHOWN}`, `running${X_SHOWN}`]) assert.ok(out.includes(s), `${s} in ${out}`);
});

test('steer: the turn and steer ids the daemon answers', async () => {
  const out = await shown(steerCommand, [ID, 'go left']);
  assert.equal(out, `steered turn turn_1${X_SHOWN} of ${ID} (st_1${X_SHOWN})\n`);
});

test("a local daemon of another version: the version in the CLI's warning", async () => {
  const home = mkdtempSync(join(tmpdir(), 'troupe-daemon-text-'));
  try {
    writeFileSync(join(home, 'daemon.json'), JSON.stringify({ pid: process.pid, url: api.url, version: 'x' }));
    writeFileSync(join(home, 'token'), 'test-token');
    const out = await shown(sessionsCommand, [], { TROUPE_HOME: home });
    assert.match(out, /^troupe: the daemon runs version 9\.9\.9\\x1b\]0;owned\\x07, this CLI is /m);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
