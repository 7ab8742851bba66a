// Glob patterns: syntax, brace expansion and linear-time matching.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { compileGlob } from '../../../src/tools/glob-pattern.js';

const cases: Array<[string, string[], string[]]> = [
  ['*.ts', ['a.ts', 'src/a.ts', 'src/deep/b.ts', '.hidden.ts'], ['a.tsx', 'a.js', 'ts']],
  ['src/*.ts', ['src/a.ts'], ['src/deep/a.ts', 'a.ts', 'lib/src/a.ts']],
  ['src/**/*.ts', ['src/a.ts', 'src/x/y/z.ts'], ['a.ts', 'srcx/a.ts']],
  ['**/test/*.js', ['test/a.js', 'pkg/test/a.js'], ['test/x/a.js', 'pkg/tests/a.js']],
  ['docs/**', ['docs/a.md', 'docs/x/y.md'], ['doc/a.md']],
  ['*.{ts,js}', ['a.ts', 'b/c.js'], ['a.md']],
  ['file?.txt', ['file1.txt', 'd/fileA.txt'], ['file10.txt', 'file.txt']],
  ['[ab]*.c', ['a1.c', 'bz.c'], ['c.c']],
  ['[!ab]*.c', ['c.c'], ['a1.c']],
  ['a+b(1).txt', ['a+b(1).txt'], ['aab1.txt']],
  ['./src/*.ts', ['src/a.ts'], ['a.ts']],
  ['{src,lib}/**/{index,main}.ts', ['src/index.ts', 'lib/x/main.ts'], ['app/index.ts', 'src/other.ts']],
];

for (const [pattern, yes, no] of cases) {
  test(`glob ${pattern}`, () => {
    const g = compileGlob(pattern);
    for (const p of yes) assert.ok(g.matches(p), `${pattern} should match ${p}`);
    for (const p of no) assert.ok(!g.matches(p), `${pattern} should not match ${p}`);
  });
}

test('malformed and absolute patterns are invalid_params', () => {
  assert.throws(() => compileGlob('src/{a,b'), { code: 'invalid_params' });
  assert.throws(() => compileGlob('/etc/*'), { code: 'invalid_params' });
});

test('braces expand before matching; too many alternatives is invalid_params', () => {
  assert.ok(compileGlob('{a/**,b}').matches('a/x/y'));
  assert.ok(compileGlob('{a,{b,c}}.ts').matches('c.ts'));
  assert.ok(compileGlob('[{]x}').matches('{x}'), 'a brace inside a class is literal');
  assert.throws(() => compileGlob('{a,b}'.repeat(9)), { code: 'invalid_params' });
});

test('patterns that backtrack exponentially as a regex match in polynomial time', { timeout: 30_000 }, async (t) => {
  // Matched in a worker so that a regression (an exponential matcher blocks its thread for
  // longer than anyone would wait) fails by this test's timeout instead of hanging the run.
  const moduleUrl = new URL('../../../src/tools/glob-pattern.js', import.meta.url).href;
  const name = 'a'.repeat(100);
  const source = `import(${JSON.stringify(moduleUrl)}).then(({ compileGlob }) => {
    const results = [${JSON.stringify('*a'.repeat(12) + '*b')}, '*a'.repeat(12) + '*', '**/' + '*a'.repeat(12) + '*b/x', ${JSON.stringify('?*'.repeat(30) + 'b')}]
      .map((p) => compileGlob(p).matches(${JSON.stringify(name)}));
    require('node:worker_threads').parentPort.postMessage(results);
  });`;
  const worker = new Worker(source, { eval: true });
  t.after(() => worker.terminate());
  const [results] = (await once(worker, 'message')) as [boolean[]];
  assert.deepEqual(results, [false, true, false, false]);
});
