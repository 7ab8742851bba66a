// The daemon's state file ($TROUPE_HOME/daemon.json) removed, cut short or edited while the daemon
// runs (a stray `rm`, an editor, a full disk): the daemon writes it again, and clients find it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeHome, until, SUITE_TIMEOUT_MS } from '../../support/cli/cli-harness.js';

/** A file's text, or undefined while there is none. */
function textOf(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

describe('a running daemon keeps its state file true', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('removed, cut short, or naming another process and URL: written again as it was; no second daemon', async () => {
    const h = makeHome();
    try {
      const started = await h.run(['daemon', 'start']);
      assert.equal(started.code, 0, started.stderr);
      const file = join(h.dir, 'daemon.json');
      const original = readFileSync(file, 'utf8');
      const state = JSON.parse(original) as { pid: number; url: string };
      const damages: [string, () => void][] = [
        ['removed', () => rmSync(file)],
        ['cut short', () => writeFileSync(file, original.slice(0, 20))],
        ['emptied', () => writeFileSync(file, '')],
        // Another live process (this one) and a URL where nothing answers.
        ['naming another process and URL', () => writeFileSync(file, JSON.stringify({ ...state, pid: process.pid, url: 'http://127.0.0.1:9' }))],
      ];
      for (const [what, damage] of damages) {
        damage();
        await until(() => textOf(file) === original, `the state file ${what}, written again`).catch((err) => {
          throw new Error(`${err.message}; daemon.log: ${readFileSync(join(h.dir, 'daemon.log'), 'utf8')}`);
        });
        assert.equal(statSync(file).mode & 0o777, 0o600, what);
        const listed = await h.run(['sessions', '--json']);
        assert.equal(listed.code, 0, `${what}: ${listed.stderr}`);
      }
      const log = readFileSync(join(h.dir, 'daemon.log'), 'utf8');
      assert.match(log, /daemon\.json was gone; written again/);
      assert.match(log, /daemon\.json was changed; written again/);
      assert.equal(log.match(/daemon listening on/g)?.length, 1, `one daemon started: ${log}`);
      assert.equal(h.daemonState()!.pid, state.pid);
    } finally {
      await h.close();
    }
  });
});
