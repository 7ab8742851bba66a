// Glob → regex translation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
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
