// `troupe run --add-dir DIR`: the session may use DIR too; `--session` without `--add-dir` keeps the
// directories the session has (the CLI sends them again, as ACP asks), and with it replaces them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jsonLines, makeHome, type Home, SUITE_TIMEOUT_MS } from '../../support/cli/cli-harness.js';

describe('troupe run --add-dir', { timeout: SUITE_TIMEOUT_MS }, () => {
  let h: Home;
  let shared: string;
  let other: string;
  let libs: string;
  before(() => {
    libs = realpathSync(mkdtempSync(join(tmpdir(), 'troupe-cli-libs-')));
    shared = join(libs, 'shared-lib');
    other = join(libs, 'other-lib');
    for (const d of [shared, other]) mkdirSync(d);
    writeFileSync(join(shared, 'lib.txt'), 'shared\n');
    const read = { tool_call: { name: 'read_file', input: { path: join(shared, 'lib.txt') } } };
    h = makeHome({ replies: [{ when: 'read the lib', items: [read] }, ...Array.from({ length: 10 }, () => [{ text: 'done' }])] });
  });
  after(() => (rmSync(libs, { recursive: true, force: true }), h.close()));

  const readStatus = (stdout: string) => {
    const done = jsonLines(stdout).filter((l: any) => l.update?.sessionUpdate === 'tool_call_update').at(-1) as any;
    return done.update.status === 'completed' ? 'completed' : done.update.rawOutput?.errorCode;
  };

  test('a directory given with --add-dir is usable, and a resumed session keeps it unless told otherwise', async () => {
    const outside = await h.run(['run', '--json', '--yes', 'read the lib']);
    assert.equal(outside.code, 0, outside.stderr);
    assert.equal(readStatus(outside.stdout), 'path_outside_workspace');

    // Relative to the directory the command runs in.
    const first = await h.run(['run', '--json', '--yes', '--cwd', h.work, '--add-dir', 'shared-lib', 'read the lib'], { cwd: libs });
    assert.equal(first.code, 0, first.stderr);
    assert.equal(readStatus(first.stdout), 'completed');
    const sessionId = (jsonLines(first.stdout).at(-1) as { sessionId: string }).sessionId;
    const shown = await h.run(['sessions', 'show', sessionId]);
    assert.match(shown.stdout, new RegExp(`\\n  also +${shared}\\n`));

    const resumed = await h.run(['run', '--json', '--yes', '--session', sessionId, 'read the lib']);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(readStatus(resumed.stdout), 'completed');

    const replaced = await h.run(['run', '--json', '--yes', '--session', sessionId, '--add-dir', other, 'read the lib']);
    assert.equal(replaced.code, 0, replaced.stderr);
    assert.equal(readStatus(replaced.stdout), 'path_outside_workspace');
  });

  test('chat names the directories of its session', async () => {
    const r = await h.run(['chat', '--add-dir', shared, '--add-dir', other], { input: '/help\n' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`\\[new session ses_\\w+ in .+ \\(also ${shared}, ${other}\\) · /help for commands\\]`));
  });

  test('a directory that does not exist is refused before any turn', async () => {
    const r = await h.run(['run', '--add-dir', join(libs, 'nope'), 'read the lib']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /additionalDirectories .*nope does not exist/);
  });
});
