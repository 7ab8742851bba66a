// The paced scan of a log (the daemon opening a feed: slices of the file with the loop's other work
// between them) finds what the one-go scan finds of the file as it is when the paced scan ends:
// the same seqs, checkpoints, valid prefix and damage, whatever the slice size, wherever the file
// is damaged, and however it grew between slices (a child appending, a record cut anywhere in two).
// Replay with FC_SEED=<seed>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, closeSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import type { AgentEvent } from '../../../src/core/events.js';
import { scanFd, scanFdPaced } from '../../../src/store/log-file.reader.js';
import { encodeEventRecord, encodeHeaderRecord, LOG_FORMAT_VERSION } from '../../../src/store/log-record.codec.js';
import { tempDir } from '../../support/store/store-fixtures.js';

const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : Date.now() ^ (Math.random() * 2 ** 31);
console.log('fast-check seed', seed);

const SID = 'ses_paced';

/** A log's bytes: its header, then one record per batch, each batch of events of the given text lengths. */
function logBytes(batches: number[][]): Buffer {
  const parts = [encodeHeaderRecord({ troupeLog: LOG_FORMAT_VERSION, sessionId: SID, createdAt: 1, baseSeq: 0 })];
  let seq = 0;
  for (const sizes of batches) {
    const events = sizes.map((n) => ({ type: 'agent_message_chunk', sessionId: SID, turnId: 't', messageId: 'm', text: 'x'.repeat(n), seq: ++seq, ts: seq }) as AgentEvent);
    parts.push(encodeEventRecord(events));
  }
  return Buffer.concat(parts);
}

const damage = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fc.record({ kind: fc.constant('flip' as const), at: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }) }),
  fc.record({ kind: fc.constant('cut' as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ kind: fc.constant('zeros' as const), n: fc.integer({ min: 1, max: 3000 }) }),
);

function damaged(buf: Buffer, d: { kind: string; at?: number; n?: number }): Buffer {
  const out = Buffer.from(buf);
  if (d.kind === 'flip') out[Math.floor(d.at! * out.length)] ^= 0x5a;
  if (d.kind === 'cut') return out.subarray(0, Math.floor(d.at! * out.length));
  if (d.kind === 'zeros') return Buffer.concat([out, Buffer.alloc(d.n!)]);
  return out;
}

test('a paced scan finds what a scan in one go finds, whatever the slices, the damage and the growth between slices', async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  let run = 0;
  // Records of up to ~160 KiB: a log of several checkpoints (one per 64 KiB) and records larger than a slice.
  const batches = fc.array(fc.array(fc.integer({ min: 0, max: 40_000 }), { minLength: 1, maxLength: 4 }), { maxLength: 12 });
  await fc.assert(
    fc.asyncProperty(batches, damage, fc.integer({ min: 1, max: 100_000 }), fc.double({ min: 0, max: 1, noNaN: true }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }), async (b, d, slice, firstAt, cutsAt) => {
      const whole = damaged(logBytes(b), d);
      // The file as it first is (cut anywhere), and what is appended at each pause (the rest, cut anywhere).
      const first = Math.floor(firstAt * whole.length);
      const ends = [...new Set([first, ...cutsAt.map((x) => first + Math.floor(x * (whole.length - first))), whole.length])].sort((x, y) => x - y);
      const pieces = ends.map((end, i) => whole.subarray(i === 0 ? 0 : ends[i - 1], end));
      const path = join(dir, `log-${run++}.log`);
      writeFileSync(path, pieces[0] ?? Buffer.alloc(0));
      let next = 1;
      const fd = openSync(path, 'r');
      try {
        const paced = await scanFdPaced(fd, path, async () => void (next < pieces.length && appendFileSync(path, pieces[next++]!)), slice);
        assert.deepEqual(paced, scanFd(fd, path), `slice ${slice}, ${next} of ${pieces.length} pieces written`);
      } finally {
        closeSync(fd);
      }
    }),
    { seed, numRuns: 150 },
  );
});
