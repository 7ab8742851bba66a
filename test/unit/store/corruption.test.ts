import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import type { AgentEvent } from '../../../src/core/events.js';
import { FileEventLog } from '../../../src/store/file-event-log.store.js';
import { readLogFile, scanLogFile } from '../../../src/store/log-file.reader.js';
import { FRAME_HEADER_BYTES } from '../../../src/store/record-frame.codec.js';
import { chunk, tempDir, turnCompleted } from '../../support/store/store-fixtures.js';

const SID = 'ses_corrupt';

/** A log of 10 records (one per turn, each turn a barrier), and the byte offset where each record starts. */
async function tenRecordLog(dir: string): Promise<{ path: string; events: AgentEvent[]; starts: number[] }> {
  const log = await FileEventLog.forSession(dir, SID, { create: true });
  for (let r = 0; r < 10; r++) {
    for (let i = 0; i < 9; i++) log.append(chunk(SID, `r${r}c${i}`));
    await log.whenDurable(log.append(turnCompleted(SID)).seq);
  }
  await log.close();
  const { events } = await readLogFile(log.path);
  const buf = readFileSync(log.path);
  const starts: number[] = [];
  for (let off = 0; off < buf.length; off += FRAME_HEADER_BYTES + buf.readUInt32LE(off)) starts.push(off);
  assert.equal(starts.length, 11, 'header + 10 records');
  return { path: log.path, events, starts: starts.slice(1) };
}

test('a flipped byte in the middle: records before it are kept, the rest is reported and truncated on a writable open', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const { path, events, starts } = await tenRecordLog(dir);
    const buf = readFileSync(path);
    const victim = starts[5]!;
    buf[victim + FRAME_HEADER_BYTES + 20] ^= 0x40;
    writeFileSync(path, buf);
    const ro = await readLogFile(path);
    assert.equal(ro.scan.warnings.length, 1);
    const w = ro.scan.warnings[0]!;
    assert.deepEqual([w.offset, w.reason, w.droppedBytes], [victim, 'crc_mismatch', buf.length - victim]);
    assert.match(w.message, new RegExp(`byte ${victim}\\b`));
    assert.deepEqual(ro.events, events.slice(0, 50));
    assert.equal(statSync(path).size, buf.length, 'reading did not modify the file');
    const warnings: string[] = [];
    const log = await FileEventLog.open(path, { logger: { debug() {}, info() {}, error() {}, warn: (m) => warnings.push(m) } });
    assert.equal(log.lastSeq(), 50);
    assert.equal(log.warnings[0]!.offset, victim);
    assert.ok(warnings.some((m) => m.includes(`byte ${victim}`)), warnings.join('\n'));
    assert.equal(statSync(path).size, victim, 'truncated at the damaged record');
    assert.equal(log.append(chunk(SID, 'after repair')).seq, 51);
    await log.close();
    const after = await readLogFile(path);
    assert.deepEqual(after.scan.warnings, []);
    assert.deepEqual(after.events.slice(0, 50), events.slice(0, 50));
    assert.equal(after.events.length, 51);
  } finally {
    cleanup();
  }
});

test('a truncated header at the tail is reported with its offset and cut off', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const { path, events, starts } = await tenRecordLog(dir);
    const cut = starts[9]! + 5;
    truncateSync(path, cut);
    const s = scanLogFile(path);
    assert.deepEqual([s.warnings[0]!.offset, s.warnings[0]!.reason, s.lastSeq], [starts[9], 'torn_header', 90]);
    const log = await FileEventLog.open(path);
    assert.equal(statSync(path).size, starts[9]);
    assert.deepEqual((await log.readAfter(0, { limit: 1000 })).events, events.slice(0, 90));
    await log.close();
  } finally {
    cleanup();
  }
});

test('a torn record body (header complete, payload short) is reported as torn_record', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const { path, starts } = await tenRecordLog(dir);
    truncateSync(path, starts[9]! + FRAME_HEADER_BYTES + 3);
    const s = scanLogFile(path);
    assert.deepEqual([s.warnings[0]!.offset, s.warnings[0]!.reason, s.lastSeq], [starts[9], 'torn_record', 90]);
  } finally {
    cleanup();
  }
});

test('a zero-filled tail is recognised, reported and cut off', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const { path, events } = await tenRecordLog(dir);
    const size = statSync(path).size;
    writeFileSync(path, Buffer.alloc(4096), { flag: 'a' });
    const s = scanLogFile(path);
    assert.deepEqual([s.warnings[0]!.offset, s.warnings[0]!.reason, s.warnings[0]!.droppedBytes, s.lastSeq], [size, 'zero_filled', 4096, 100]);
    const log = await FileEventLog.open(path);
    assert.equal(statSync(path).size, size);
    assert.deepEqual((await log.readAfter(0, { limit: 1000 })).events, events);
    await log.close();
  } finally {
    cleanup();
  }
});

test('garbage instead of the header: read-only sees no events; a writable open starts the file again', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const { path } = await tenRecordLog(dir);
    const buf = readFileSync(path);
    buf[4] ^= 0xff; // the header record's CRC
    writeFileSync(path, buf);
    const ro = await readLogFile(path);
    assert.deepEqual([ro.events.length, ro.scan.warnings[0]!.offset, ro.scan.warnings[0]!.reason], [0, 0, 'crc_mismatch']);
    const log = await FileEventLog.open(path, { sessionId: SID });
    assert.equal(log.lastSeq(), 0);
    assert.equal(log.append(chunk(SID, 'fresh')).seq, 1);
    await log.close();
    assert.equal((await readLogFile(path)).events.length, 1);
  } finally {
    cleanup();
  }
});

test('random damage anywhere never crashes the reader and always yields a prefix', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const { path, events } = await tenRecordLog(dir);
    const pristine = readFileSync(path);
    for (let i = 0; i < 200; i++) {
      const buf = Buffer.from(pristine);
      const at = (i * 7919) % buf.length;
      buf[at] ^= 1 + (i % 255);
      const cut = i % 3 === 0 ? buf.length - ((i * 31) % 200) : buf.length;
      writeFileSync(path, buf.subarray(0, cut));
      const r = await readLogFile(path);
      assert.deepEqual(r.events, events.slice(0, r.events.length), `damage at ${at}`);
      if (at < cut) assert.equal(r.scan.warnings.length, 1, `damage at ${at} reported`);
    }
  } finally {
    cleanup();
  }
});

test('an empty file (a crash right after it was created) gets its header on a writable open', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const path = `${dir}/${SID}.log`;
    writeFileSync(path, '');
    const ro = await readLogFile(path);
    assert.deepEqual([ro.events.length, ro.scan.warnings.length, ro.scan.header], [0, 0, undefined]);
    await assert.rejects(FileEventLog.open(path), (e: unknown) => e instanceof Error && /no valid header/.test(e.message), 'no session id: cannot guess the header');
    const log = await FileEventLog.open(path, { sessionId: SID });
    assert.equal(log.append(chunk(SID, 'first')).seq, 1);
    await log.close();
    const after = await readLogFile(path);
    assert.equal(after.scan.header?.sessionId, SID);
    assert.deepEqual(after.events.map((e) => e.seq), [1]);
  } finally {
    cleanup();
  }
});
