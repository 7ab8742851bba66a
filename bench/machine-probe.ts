/**
 * What the machine charges for the three things a process start, a relay and a session's durable
 * writes do most besides computing: a page fault (the first touch of a fresh 4 KiB page), a system
 * call and an fdatasync. Recorded in the results next to the figures they explain: on the VM image
 * this project has run on since 2026-12-02 a fault costs 11–15 µs and a bare syscall about 1.2 µs
 * (a paravirtualized guest whose page tables the hypervisor keeps), roughly ten times what hardware
 * virtualization charges, and a cold child touches about 5,500 pages before it answers
 * `session/new` (bench/README.md, "The machine"); an fdatasync took 0.1 ms on one machine and 2–8 ms
 * on the next. Measured in a fresh process so that the bench's own heap does not count.
 */
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';

// Runs in the fresh process: a zero-filled array's pages are mapped on first touch, one fault each.
const PROBE = `
const { openSync, readSync, writeSync, fdatasyncSync, mkdtempSync, rmSync } = require('node:fs');
const { join } = require('node:path');
const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
const faults = [], reads = [];
const fd = openSync('/dev/zero', 'r'), one = Buffer.alloc(1);
for (let r = 0; r < 3; r++) {
  const bytes = 32 << 20, page = 4096, a = new Uint8Array(bytes);
  let t = performance.now();
  for (let i = 0; i < bytes; i += page) a[i] = 1;
  faults.push(((performance.now() - t) * 1000) / (bytes / page));
  t = performance.now();
  for (let i = 0; i < 20000; i++) readSync(fd, one, 0, 1, null);
  reads.push(((performance.now() - t) * 1000) / 20000);
}
// Where the bench's homes and logs are (its TMPDIR): a 100-byte append then its fdatasync, 20 times.
const dir = mkdtempSync(join(process.argv[1], 'troupe-machine-probe-')), log = openSync(join(dir, 'log'), 'w'), syncs = [];
for (let i = 0; i < 20; i++) {
  writeSync(log, Buffer.alloc(100, 120));
  const t = performance.now();
  fdatasyncSync(log);
  syncs.push((performance.now() - t) * 1000);
}
rmSync(dir, { recursive: true, force: true });
process.stdout.write(JSON.stringify({ pageFaultUs: +median(faults).toFixed(2), readSyncUs: +median(reads).toFixed(2), fdatasyncUs: Math.round(median(syncs)) }));
`;

export interface MachineCosts {
  /** µs per first touch of a fresh 4 KiB page (32 MiB touched, median of 3). */
  pageFaultUs: number;
  /** µs per `fs.readSync` of one byte from /dev/zero: one read(2) plus Node's binding (median of 3 × 20,000). */
  readSyncUs: number;
  /**
   * µs per fdatasync of a 100-byte append to a file under the temp directory (median of 20): what
   * a `session/new` and every turn's end pay once (their events are durable before the answer).
   */
  fdatasyncUs: number;
}

export function machineCosts(): MachineCosts {
  return JSON.parse(execFileSync(process.execPath, ['-e', PROBE, tmpdir()], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } })) as MachineCosts;
}
