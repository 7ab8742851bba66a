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

let api: FakeApi;
before(async () => {
  api = await fakeManagementApi({
    'GET /v1/sessions': { sessions: [session('ses_0a'), session('ses_0b')] },
    'GET /v1/sessions?all=1': { sessions: [session('ses_0a'), session('ses_0b'), session('ses_0c', { status: 'deleted' })] },
  });
});
after(() => api.close());

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
