// src/acp/builtins-first.ts: putting the heap flag back to its default gives a process V8's default
// flags again (so that code caches made under them, Node's builtins' among them, are accepted), and
// leaves the heap budget it started with.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadedBuiltins, withoutHeapFlag } from '../../../src/acp/builtins-first.js';

const MODULE = pathToFileURL(resolve('dist/src/acp/builtins-first.js')).href;

/** Runs an ES module snippet in a fresh node with these flags; returns what it printed, parsed. */
function run(nodeArgs: string[], code: string): any {
  const r = spawnSync(process.execPath, [...nodeArgs, '--input-type=module', '-e', code], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test('with the heap flag reset, a code cache made under default flags is accepted, and the heap keeps its budget', () => {
  const cache = join(mkdtempSync(join(tmpdir(), 'troupe-builtins-first-')), 'x.cache');
  const script = `const s = new (await import('node:vm')).Script('(function () { return 1 + 1 })', { filename: 'x.js', cachedData: fs.existsSync(${JSON.stringify(cache)}) ? fs.readFileSync(${JSON.stringify(cache)}) : undefined });`;
  const prelude = `import fs from 'node:fs'; import v8 from 'node:v8'; import { resetHeapFlag } from ${JSON.stringify(MODULE)};`;
  // Made under V8's default flags.
  run([], `${prelude} ${script} fs.writeFileSync(${JSON.stringify(cache)}, s.createCachedData()); console.log('{}');`);
  const asIs = run(['--max-old-space-size=123'], `${prelude} ${script} console.log(JSON.stringify({ rejected: s.cachedDataRejected }));`);
  assert.equal(asIs.rejected, true, 'under the heap flag V8 refuses it');
  const reset = run(
    ['--max-old-space-size=123'],
    `${prelude} const before = v8.getHeapStatistics().heap_size_limit; resetHeapFlag(); ${script} console.log(JSON.stringify({ rejected: s.cachedDataRejected, before, after: v8.getHeapStatistics().heap_size_limit }));`,
  );
  assert.equal(reset.rejected, false, 'once the flag is reset, V8 takes it');
  assert.equal(reset.after, reset.before);
  const unbudgeted = run([], `import v8 from 'node:v8'; console.log(v8.getHeapStatistics().heap_size_limit);`);
  assert.ok(reset.after < unbudgeted, 'the budget of 123 MiB still holds');
});

test('the heap flag is the only node flag left out, and the builtins loaded are listed by their public ids', () => {
  assert.deepEqual(withoutHeapFlag(['--max-old-space-size=512', '--stack-size=900']), ['--stack-size=900']);
  assert.deepEqual(withoutHeapFlag(['--max-semi-space-size=2']), ['--max-semi-space-size=2']);
  const loaded = loadedBuiltins();
  assert.ok(loaded.includes('fs') && loaded.includes('child_process'), loaded.join());
  assert.ok(loaded.every((id) => !id.startsWith('internal/')));
});
