// `troupe attach --interactive` fed piped input: a permission request is rejected, as chat does, and
// a failed line makes it exit 1. A file of its own: the turn-control suite
// (cli-turn-control.e2e.test.ts) is near its time budget on a loaded machine.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { jsonLines, makeHome, type Home, SUITE_TIMEOUT_MS } from '../../support/cli/cli-harness.js';
import { REPLIES } from '../../support/cli/control-replies.js';

describe('troupe attach --interactive with piped input', { concurrency: 1, timeout: SUITE_TIMEOUT_MS }, () => {
  let d: Home;
  before(() => {
    d = makeHome({ replies: REPLIES });
  });
  after(() => d.close());

  test('attach --interactive with piped input rejects a permission request, as chat does, instead of waiting for an answer no one can give', async () => {
    const first = await d.run(['run', '--json', 'hello']);
    assert.equal(first.code, 0, first.stderr);
    const sessionId = jsonLines(first.stdout).at(-1)!.sessionId as string;
    // Its input is read to the end before the turn asks: the question has no line left to take.
    const r = await d.run(['attach', sessionId, '--interactive'], { input: 'write it down\n' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\[denied Write noted\.txt: no terminal to ask/);
    assert.match(r.stdout, /Noted\./, 'the turn went on without the write');
    assert.equal(existsSync(join(d.work, 'noted.txt')), false);
  });

  test('attach --interactive with piped input exits 1 when one of its lines failed, as chat does', async () => {
    const first = await d.run(['run', '--json', 'hello']);
    assert.equal(first.code, 0, first.stderr);
    const sessionId = jsonLines(first.stdout).at(-1)!.sessionId as string;
    const r = await d.run(['attach', sessionId, '--interactive'], { input: 'fail please\nhello\n' });
    assert.match(r.stdout, /Hello there\./, 'the lines after the failed turn are played');
    // Until 2026-12-06: exit 0, and a script could not tell.
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /troupe attach: a turn failed, the first: .*the key was refused.* \(provider_auth\)\n$/);
  });
});
