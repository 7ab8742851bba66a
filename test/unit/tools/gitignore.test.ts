// .gitignore lines as glob and grep read them (gitignore(5), matched by node-ignore; layered in src/tools/gitignore.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isIgnored, parseGitignore } from '../../../src/tools/gitignore.js';

const layer = (dir: string, text: string) => parseGitignore(dir, text)!;

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

test('a directory one file ignores and a deeper file re-includes is walked, and the outer file still judges its entries', () => {
  // As git has it: with `build/` and `*.o` at the top and `!build/` in sub/, `git status --ignored`
  // lists sub/build/y.c and sub/build/z/q.c as untracked and only sub/build/x.o as ignored.
  const layers = [layer('/w', 'build/\n*.o\n'), layer('/w/sub', '!build/\n')];
  assert.equal(isIgnored(layers.slice(0, 1), '/w/build', true), true);
  assert.equal(isIgnored(layers, '/w/sub/build', true), false, 'the inner file re-includes the directory');
  assert.equal(isIgnored(layers, '/w/sub/build/y.c', false), false, 'not ignored for lying in a directory the outer file ignores');
  assert.equal(isIgnored(layers, '/w/sub/build/z', true), false);
  assert.equal(isIgnored(layers, '/w/sub/build/z/q.c', false), false);
  assert.equal(isIgnored(layers, '/w/sub/build/x.o', false), true, 'the outer file\'s own match still holds');
  // A directory a search names is walked although ignored: its entries are judged by their own matches too.
  const named = [layer('/w', 'dist/\n*.map\n')];
  assert.equal(isIgnored(named, '/w/dist/app.js', false), false);
  assert.equal(isIgnored(named, '/w/dist/app.js.map', false), true);
  assert.equal(isIgnored([layer('/w', 'A.log\n')], '/w/a.log', false), false, 'case-sensitive, as git is by default');
  assert.equal(parseGitignore('/w', '# only a comment\n\n'), undefined);
});
