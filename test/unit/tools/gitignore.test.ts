// .gitignore lines as glob and grep read them (gitignore(5), the subset in src/tools/gitignore.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isIgnored, parseGitignore } from '../../../src/tools/gitignore.js';

const layer = (dir: string, text: string) => ({ dir, rules: parseGitignore(text) });

test('names at any depth, anchored paths, directories only, ** and classes', () => {
  const layers = [layer('/w', 'target\n/out\ncache/\ndocs/*.html\n**/gen/*.ts\n*.py[co]\n')];
  const cases: Array<[string, boolean, boolean]> = [
    ['/w/target', true, true],
    ['/w/a/b/target', false, true],
    ['/w/out', true, true],
    ['/w/src/out', true, false], // anchored to the file's directory
    ['/w/cache', true, true],
    ['/w/cache', false, false], // a file named cache: the pattern is for directories
    ['/w/docs/a.html', false, true],
    ['/w/docs/sub/a.html', false, false], // * does not cross /
    ['/w/gen/x.ts', false, true],
    ['/w/a/b/gen/x.ts', false, true],
    ['/w/m.pyc', false, true],
    ['/w/m.py', false, false],
  ];
  for (const [path, isDir, expected] of cases) assert.equal(isIgnored(layers, path, isDir), expected, path);
});

test('the last matching line decides, across files; comments, escapes, blanks and CRLF', () => {
  const top = [layer('/w', '*.log\r\n# comment\r\n\\#hash\r\n  \r\n!keep.log\r\nspace\\ \r\ntrail   \r\n')];
  const layers = top; // the layers of an entry's ancestor directories, outermost first
  const sub = [...top, layer('/w/sub', '!*.log\nkeep.log\n')];
  assert.equal(isIgnored(layers, '/w/a.log', false), true);
  assert.equal(isIgnored(layers, '/w/keep.log', false), false);
  assert.equal(isIgnored(sub, '/w/sub/a.log', false), false, 'the inner file re-includes');
  assert.equal(isIgnored(sub, '/w/sub/keep.log', false), true, 'and ignores again');
  assert.equal(isIgnored(layers, '/w/#hash', false), true);
  assert.equal(isIgnored(layers, '/w/# comment', false), false);
  assert.equal(isIgnored(layers, '/w/space ', false), true);
  assert.equal(isIgnored(layers, '/w/trail', false), true);
  assert.equal(isIgnored([layer('/w', '[z-a]\n{a,b}\n')], '/w/{a,b}', false), true, 'a bad class is left out; braces are literal');
});
