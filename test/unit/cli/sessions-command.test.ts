// `troupe sessions`: the `list` subcommand, documented as the listing it is; damaged sessions (a
// log that does not open) marked in the list and described by `show`. In-process against a fake
// management API.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { sessionsCommand } from '../../../src/cli/sessions.command.js';
import { fakeManagementApi, type FakeApi } from '../../support/cli/fake-management-api.js';

const session = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  cwd: `/w/${id}`,
  title: `title of ${id}`,
  model: 'scripted/demo',
  mode: 'default',
  createdAt: 0,
  updatedAt: 0,
  status: 'active',
  lastSeq: 3,
  child: null,
  connections: 0,
  live: false,
  ...extra,
});

/** An OSC that retitles the terminal: a daemon is a remote peer, its words are spelled out. */
const X = '\x1b]0;owned\x07';
const damaged = session('ses_0dmg', { damaged: { code: 'log_corrupt', offset: 4120 } });

let api: FakeApi;
let damagedApi: FakeApi;
before(async () => {
  api = await fakeManagementApi({
    'GET /v1/sessions': { sessions: [session('ses_0a'), session('ses_0b')] },
    'GET /v1/sessions?all=1': { sessions: [session('ses_0a'), session('ses_0b'), session('ses_0c', { status: 'deleted' })] },
  });
  damagedApi = await fakeManagementApi({
    'GET /v1/sessions': { sessions: [session('ses_0whole'), damaged, session('ses_0evil', { status: 'closed', damaged: { code: `log_corrupt${X}`, offset: `9${X}` } })] },
    'GET /v1/sessions/ses_0dmg': { ...damaged, machines: {}, transitions: [] },
    'GET /v1/sessions/ses_0whole': { ...session('ses_0whole'), machines: {}, transitions: [] },
    'GET /v1/sessions/ses_0evil': { ...session('ses_0evil', { damaged: { code: `log_corrupt${X}`, offset: `9${X}` } }), machines: {}, transitions: [] },
  });
});
after(() => Promise.all([api.close(), damagedApi.close()]));

test("'sessions list' is the listing, as its help and the overview say", async () => {
  for (const flags of [[], ['--all'], ['--json'], ['--all', '--json']]) {
    const plain = await api.run(sessionsCommand, flags);
    const list = await api.run(sessionsCommand, ['list', ...flags]);
    assert.equal(list.code, 0, list.stderr);
    assert.equal(list.stdout, plain.stdout, flags.join(' '));
  }
  const extra = await api.run(sessionsCommand, ['list', 'ses_0a']);
  assert.deepEqual([extra.code, extra.stderr], [2, "troupe sessions list: unexpected argument 'ses_0a' (try 'troupe sessions list --help')\n"]);
  // Until 2026-12-06 neither help named it.
  const help = await api.run(sessionsCommand, ['--help']);
  assert.match(help.stdout, /^Usage: troupe sessions \[list\] \[--all\] \[--json\]$/m);
  assert.match(help.stdout, /'troupe sessions list' is the same/);
  const overview = execFileSync(process.execPath, [resolve('bin/troupe.js'), '--help'], { encoding: 'utf8' });
  assert.match(overview, /^ {2}troupe sessions \[list\|show\|revive\|delete\]$/m);
});

test('a damaged session (its log does not open) is marked in the list, and show says where the damage starts', async () => {
  // Until 2026-12-06 the daemon's `damaged` was shown nowhere but in --json.
  const list = await damagedApi.run(sessionsCommand, []);
  assert.equal(list.code, 0, list.stderr);
  const row = (id: string) => list.stdout.split('\n').find((l) => l.startsWith(id)) ?? '';
  assert.match(row('ses_0dmg'), /^ses_0dmg +active \(damaged\) +- /);
  assert.match(row('ses_0whole'), /^ses_0whole +active +- /);
  assert.doesNotMatch(row('ses_0whole'), /damaged/);
  assert.match(row('ses_0evil'), /^ses_0evil +closed \(damaged\) +- /);

  const show = await damagedApi.run(sessionsCommand, ['show', 'ses_0dmg']);
  assert.equal(show.code, 0, show.stderr);
  assert.match(show.stdout, /^ {2}status {7}active \(damaged\)$/m);
  assert.match(show.stdout, /^ {2}damaged {6}log_corrupt at byte 4120: its log does not open \(troupe log dump ses_0dmg shows what is readable\)$/m);
  const whole = await damagedApi.run(sessionsCommand, ['show', 'ses_0whole']);
  assert.equal(whole.code, 0, whole.stderr);
  assert.doesNotMatch(whole.stdout, /damaged/);

  // The daemon's words in it are spelled out, as every field of its is.
  const evil = await damagedApi.run(sessionsCommand, ['show', 'ses_0evil']);
  assert.equal(evil.code, 0, evil.stderr);
  assert.ok(!/[\x00-\x09\x0b-\x1f\x7f-\x9f]/.test(evil.stdout + list.stdout), JSON.stringify(evil.stdout));
  assert.match(evil.stdout, /damaged {6}log_corrupt\\x1b\]0;owned\\x07 at byte 9\\x1b\]0;owned\\x07:/);
});
