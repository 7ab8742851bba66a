// `troupe log dump` reads a log a page at a time (after a scan that keeps nothing): a log of any size
// is dumped, where until 2026-12-07 the whole file was read into one buffer and every event decoded at
// once, and a log of over 2 GiB could not be dumped at all (Node's `ERR_FS_FILE_TOO_LARGE`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, statSync, truncateSync } from 'node:fs';
import { readLogFile } from '../../../src/store/log-file.reader.js';
import { chunk, sessionCreated, tempDir, turnCompleted, writtenLog } from '../../support/store/store-fixtures.js';
import { runLogDump as dump } from '../../support/cli/log-dump-run.js';

test('a log file of over 2 GiB is dumped: its events, and a warning for its damaged tail', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const log = await writtenLog(dir, 'ses_0huge', [sessionCreated('ses_0huge', '/w'), chunk('ses_0huge', 'kept')]);
    const stored = (await log.readAfter(0)).events;
    const valid = statSync(log.path).size;
    // A torn record, then a hole to past 2 GiB (sparse: no disk is used, and the scan stops at the
    // torn record, where a tail of zeros would be read to its end to tell it is one).
    appendFileSync(log.path, Buffer.alloc(16, 0xff));
    truncateSync(log.path, 2 ** 31 + 4096);
    const r = await dump([log.path, '--json']);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(r.out.trimEnd().split('\n').map((l) => JSON.parse(l)), stored);
    assert.match(r.err, new RegExp(`^warning: .*at byte ${valid}; the ${2 ** 31 + 4096 - valid} bytes from there on are not part of the log\\n$`));
  } finally {
    cleanup();
  }
});

test('a log of many pages is dumped whole and in order, for people and as JSON', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const log = await writtenLog(dir, 'ses_0pages', (function* () {
      yield sessionCreated('ses_0pages', '/w');
      // More events than a page holds (4096), and more bytes (4 MiB) in some of them.
      for (let i = 0; i < 9000; i++) yield chunk('ses_0pages', i % 1000 === 0 ? `${i} ${'y'.repeat(900_000)}` : String(i));
      yield turnCompleted('ses_0pages');
    })());
    // What the log holds, read whole as the dump used to.
    const stored = (await readLogFile(log.path)).events;
    assert.equal(stored.length, 9002, 'the premise: every event read back');
    const j = await dump([log.path, '--json']);
    assert.equal(j.code, 0, j.err);
    assert.equal(j.err, '');
    assert.equal(j.out, stored.map((e) => `${JSON.stringify(e)}\n`).join(''));
    const h = await dump([log.path]);
    assert.equal(h.code, 0, h.err);
    const lines = h.out.trimEnd().split('\n');
    assert.match(lines[0]!, /^# session ses_0pages, log created \S+, 9002 events \(seq 1–9002\)$/);
    assert.deepEqual(lines.slice(1).map((l) => Number(/^\s*(\d+) /.exec(l)?.[1])), stored.map((e) => e.seq));
  } finally {
    cleanup();
  }
});
