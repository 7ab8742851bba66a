// `troupe run` with its prompt on stdin (`echo … | troupe run`, `troupe run - < FILE`): the real
// binary with a piped stdin, on the offline models, against a real daemon in a temporary home.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { jsonLines, makeHome, type Home, SUITE_TIMEOUT_MS } from '../../support/cli/cli-harness.js';

describe('troupe run with the prompt on stdin', { concurrency: 1, timeout: SUITE_TIMEOUT_MS }, () => {
  let h: Home;
  before(() => {
    h = makeHome();
  });
  after(() => h.close());

  /** The text of the session's one prompt, as the log holds it. */
  const promptOf = async (stdout: string): Promise<string> => {
    const id = jsonLines(stdout).at(-1)!.sessionId as string;
    const dump = await h.run(['log', 'dump', id, '--json']);
    assert.equal(dump.code, 0, dump.stderr);
    const said = jsonLines(dump.stdout).filter((e) => e.type === 'user_message');
    assert.equal(said.length, 1);
    return said[0]!.content.map((b: { text: string }) => b.text).join('');
  };

  test('a usage mistake on stdin starts no daemon: an empty or blank stdin is a missing prompt', async () => {
    for (const input of ['', ' \n\t\n']) {
      const r = await h.run(['run'], { input });
      assert.deepEqual([r.code, r.stdout, r.stderr], [2, '', "troupe run: missing the prompt: stdin was empty (try 'troupe run --help')\n"], JSON.stringify(input));
    }
    const dash = await h.run(['run', '-'], { input: '\n' });
    assert.deepEqual([dash.code, dash.stderr], [2, "troupe run: missing the prompt: stdin was empty (try 'troupe run --help')\n"]);
    // An empty word is no prompt either, and stdin is not read for it.
    const empty = await h.run(['run', ''], { input: 'list the files' });
    assert.deepEqual([empty.code, empty.stderr], [2, "troupe run: missing the prompt (try 'troupe run --help')\n"]);
    assert.equal(h.daemonState(), undefined, 'no daemon was started');
  });

  test('a prompt over what one request carries is refused before anything starts (prompt_too_large)', async () => {
    // 16 MiB of text, and 3 MiB of control characters, each 6 bytes as JSON (\u0001).
    for (const input of ['a'.repeat(16 * 1024 * 1024), '\u0001'.repeat(3 * 1024 * 1024)]) {
      const r = await h.run(['run'], { input });
      assert.deepEqual(
        [r.code, r.stdout, r.stderr],
        [1, '', 'troupe run: the prompt on stdin is too large: one request to the daemon carries at most 16 MiB, a prompt of 16760832 bytes as JSON (prompt_too_large)\n'],
      );
    }
    assert.equal(h.daemonState(), undefined, 'no daemon was started');
  });

  test('with no prompt argument, a piped stdin is the prompt, read to its end and trimmed', async () => {
    const r = await h.run(['run'], { input: 'list the files here and read package.json\n' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /List \. \(read, completed\)/);
    assert.match(r.stdout, /cli-fixture/, 'the answer reports the file the piped prompt asked to read');
    const lines = await h.run(['run', '--json'], { input: '\n  first line\n second line \n\n' });
    assert.equal(lines.code, 0, lines.stderr);
    assert.equal(await promptOf(lines.stdout), 'first line\n second line');
  });

  test("'-' reads the prompt from stdin too", async () => {
    const r = await h.run(['run', '--json', '-'], { input: 'read package.json' });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await promptOf(r.stdout), 'read package.json');
  });

  test('a prompt given as words wins over a piped stdin, which is not read: one left open does not hang it', async () => {
    const b = h.start(['run', '--json', 'read package.json']);
    b.child.stdin!.write('list the files here\n'); // and never ended
    const r = await b.done;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await promptOf(r.stdout), 'read package.json');
  });

  test('a permission request of a piped prompt is denied unless --yes: no one can answer on that stdin', async () => {
    const denied = await h.run(['run'], { input: 'create a file piped.txt with hello' });
    assert.equal(denied.code, 0, denied.stderr);
    assert.match(denied.stdout, /\[denied Write piped\.txt: no terminal to ask; pass --yes to allow\]/);
    assert.equal(existsSync(join(h.work, 'piped.txt')), false);
    const allowed = await h.run(['run', '--yes'], { input: 'create a file piped.txt with hello' });
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stdout, /\[allowed Write piped\.txt \(--yes\)\]/);
    assert.equal(existsSync(join(h.work, 'piped.txt')), true);
  });
});
