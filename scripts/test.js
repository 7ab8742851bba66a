#!/usr/bin/env node
// Runs the compiled test files with node:test. Arguments filter by path substring:
//   node scripts/test.js store property    → only files whose path contains "store" or "property".
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
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
if (result.status === 0) {
  try {
    rmSync(runTmp, { recursive: true, force: true });
  } catch (err) {
    console.error(`could not remove the run's temporary files in ${runTmp}: ${err.message}`);
  }
} else console.error(`the run's temporary files are kept in ${runTmp}`);
process.exit(result.status ?? 1);
