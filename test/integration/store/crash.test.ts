// Crash test: a real node process appends to a FileEventLog and is SIGKILLed at random moments,
// 50 times on the same file. After each kill: the file reads as a prefix of what was written,
// a read-only open leaves it untouched, every record that remains is CRC-valid after a writable
// open, and every seq the child reported durable is there. Replay the kill timings with FC_SEED.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileEventLog } from '../../../src/store/file-event-log.store.js';
import { readLogFile, scanLogFile } from '../../../src/store/log-file.reader.js';
import { eventFor } from './crash-child.js';
import { tempDir } from '../../support/store/store-fixtures.js';

const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : Date.now() ^ (Math.random() * 2 ** 31);
console.log('fast-check seed', seed);

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'crash-child.js');
const SID = 'ses_crash';
const KILLS = 50;

/** mulberry32: a small seeded PRNG for the kill delays. */
function prng(s: number): () => number {
  let a = s >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Run {
  start: number;
  durable: number;
  signal: NodeJS.Signals | null;
}

function runAndKill(path: string, delayMs: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, path, SID], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => (stderr += d));
    let buf = '';
    let start = -1;
    let durable = 0;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      buf += d;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const [word, n] = buf.slice(0, nl).split(' ');
        buf = buf.slice(nl + 1);
        if (word === 'ready') {
          start = Number(n);
          setTimeout(() => child.kill('SIGKILL'), delayMs);
        } else if (word === 'durable') durable = Math.max(durable, Number(n));
      }
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (start < 0) reject(new Error(`child exited (${code ?? signal}) before it was ready: ${stderr}`));
      else resolve({ start, durable, signal });
    });
  });
}

/**
 * The shared dist/ tree is rebuilt by other engineers' tsc runs; a child that starts while a module
 * is being rewritten fails to load. Only that failure (before the log is even opened) is retried.
 */
async function runWithLoadRetry(path: string, delayMs: number): Promise<Run> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await runAndKill(path, delayMs);
    } catch (err) {
      const msg = (err as Error).message;
      const loadFailure = /SyntaxError: The requested module|ERR_MODULE_NOT_FOUND|Unexpected end of input/.test(msg);
      if (!loadFailure || attempt >= 3) throw err;
      console.log(`crash child failed to load modules (attempt ${attempt}), retrying: ${msg.split('\n')[0]}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

const digest = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

test(`a writer SIGKILLed ${KILLS} times loses nothing it reported durable and leaves a valid prefix`, { timeout: 120_000 }, async () => {
  assert.ok(existsSync(CHILD), 'the child script is built');
  const { dir, cleanup } = tempDir('troupe-crash-');
  const rand = prng(seed);
  const path = join(dir, `${SID}.log`);
  let torn = 0;
  let lastSeq = 0;
  try {
    for (let k = 0; k < KILLS; k++) {
      const run = await runWithLoadRetry(path, Math.floor(rand() * 40));
      assert.equal(run.signal, 'SIGKILL', 'the child was killed, it did not exit');
      assert.equal(run.start, lastSeq, 'the reopened writer continued from the last valid seq');
      // Read-only first: it must see a prefix and must not touch the file.
      const before = digest(path);
      const { events, scan } = await readLogFile(path);
      const ro = await FileEventLog.open(path, { readOnly: true });
      assert.equal(ro.lastSeq(), scan.lastSeq);
      assert.equal(digest(path), before, 'a read-only open does not modify the file');
      events.forEach((e, i) => {
        assert.equal(e.seq, i + 1, 'seqs from 1 without holes');
        const want = eventFor(e.seq, SID);
        assert.deepEqual({ ...e, ts: 0 }, { ...want, seq: e.seq, ts: 0 }, `event ${e.seq} is what was written`);
      });
      assert.ok(events.length >= run.durable, `kill ${k}: durable ${run.durable} but only ${events.length} events survived`);
      assert.ok(events.length >= lastSeq, 'nothing that survived an earlier crash was lost');
      if (scan.warnings.length > 0) {
        torn++;
        assert.equal(scan.warnings.length, 1);
        assert.equal(scan.warnings[0]!.offset, scan.validBytes, 'the warning names the offset of the damaged tail');
      }
      // A writable open repairs the tail: afterwards every byte of the file is a valid record.
      const w = await FileEventLog.open(path);
      await w.close();
      const clean = scanLogFile(path);
      assert.deepEqual(clean.warnings, []);
      assert.equal(clean.validBytes, clean.fileBytes);
      assert.equal(clean.lastSeq, events.length);
      lastSeq = events.length;
    }
    console.log(`crash test: ${KILLS} kills, ${lastSeq} events survived, ${torn} torn tails repaired`);
    assert.ok(lastSeq > 0);
  } finally {
    cleanup();
  }
});
