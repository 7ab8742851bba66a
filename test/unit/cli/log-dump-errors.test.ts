// `troupe log dump` of a file that is not a whole troupe log: one error line, as every error is
// (docs/cli.md §Errors), with nothing on stdout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sessionCreated, tempDir, writtenLog } from '../../support/store/store-fixtures.js';
import { runLogDump as dump } from '../../support/cli/log-dump-run.js';

test('a file cut inside its header is one error line, not a warning and then the error', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const log = await writtenLog(dir, 'ses_0cut', [sessionCreated('ses_0cut', '/w')]);
    const cut = join(dir, 'cut.log');
    writeFileSync(cut, readFileSync(log.path).subarray(0, 5));
    for (const args of [[cut], [cut, '--json']]) {
      const r = await dump(args);
      assert.equal(r.code, 1);
      assert.equal(r.out, '');
      // Until 2026-12-07 a line "warning: …: truncated record header (5 of 8 bytes) at byte 0; the 5 bytes from there on are not part of the log" came first.
      assert.equal(r.err, `troupe log dump: ${cut} is not a troupe log (log_corrupt)\n`);
    }
  } finally {
    cleanup();
  }
});
