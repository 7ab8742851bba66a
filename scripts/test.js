#!/usr/bin/env node
// Runs the compiled test files with node:test. Arguments filter by path substring:
//   node scripts/test.js store property    → only files whose path contains "store" or "property".
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith('.test.js')) out.push(path);
  }
  return out;
}

const filters = process.argv.slice(2);
// Only the compiled tests whose source is still there: tsc never removes what it emitted for a test
// file since deleted or renamed, and a checkout that builds in place would go on running it.
const files = walk('dist/test')
  .filter((f) => existsSync(f.replace(/^dist[\\/]/, '').replace(/\.js$/, '.ts')))
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
// Every test process, and the daemons, agents and browsers it starts, makes its temporary directories
// in one directory of this run (TMPDIR), removed at the end: a run makes about a thousand of them
// (some 40 MiB), which /tmp would otherwise keep run after run. A failed run keeps them, and says where.
const runTmp = mkdtempSync(join(tmpdir(), 'troupe-test-'));
// No test file may hang the run: on Node 20 --test-timeout bounds each file's process, and one stuck
// waiting for something that never comes fails after 10 minutes, naming itself, instead of holding CI
// until its own limit (a daemon-event-feeds case was once seen stuck under load, 2026-12-06, and not
// reproduced since). The slowest file takes well under a minute.
const result = spawnSync(process.execPath, ['--test', '--test-concurrency=2', '--test-timeout=600000', ...files], { stdio: 'inherit', env: { ...process.env, TMPDIR: runTmp } });
// A test file's process killed at the timeout never runs its `after` hooks: the daemons, agents and
// browsers it started would run on. Each of them has this run's TMPDIR in its environment (children
// inherit it), so whatever still has it now was left behind: named, then killed, and the run fails
// (no process of troupe's may outlive what started it: a test that leaves one is a bug to fix).
const leftBehind = stillRunningAfterGrace(`TMPDIR=${runTmp}`, 3000);
for (const { pid, command } of leftBehind) {
  console.error(`left running by the tests, killed: pid ${pid}: ${command}`);
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
const status = leftBehind.length > 0 && result.status === 0 ? 1 : result.status;
if (status === 0) {
  try {
    rmSync(runTmp, { recursive: true, force: true });
  } catch (err) {
    console.error(`could not remove the run's temporary files in ${runTmp}: ${err.message}`);
  }
} else console.error(`the run's temporary files are kept in ${runTmp}`);
process.exit(status ?? 1);

/** Processes (not this one) whose environment holds `entry` exactly; none where there is no /proc. */
function processesWithEnv(entry) {
  if (!existsSync('/proc/self/environ')) return [];
  const found = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(entry)) continue;
      found.push({ pid, command: readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim() });
    } catch {
      // exited meanwhile, or not ours to read
    }
  }
  return found;
}

/** Those of `processesWithEnv(entry)` still there after `graceMs`: one that a last `after` hook has just signalled may be exiting. */
function stillRunningAfterGrace(entry, graceMs) {
  if (processesWithEnv(entry).length === 0) return [];
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, graceMs);
  return processesWithEnv(entry);
}
