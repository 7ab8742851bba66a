// Which AGENTS.md files a session's system prompt carries, read from real files: the git
// repository's chain down to the cwd, then each additional directory's root; each file once; a long
// one cut on a character boundary; a FIFO or an unreadable one skipped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_INSTRUCTIONS_BYTES, MAX_TOTAL_INSTRUCTIONS_BYTES, projectInstructions } from '../../../src/acp/project-instructions.js';
import { systemPrompt } from '../../../src/acp/system-prompt.js';

const dir = (prefix: string) => realpathSync(mkdtempSync(join(tmpdir(), prefix)));

test('the repository chain from its root down to the cwd, then each additional directory, each file once', () => {
  const repo = dir('troupe-agents-repo-');
  mkdirSync(join(repo, '.git'));
  const pkg = join(repo, 'packages', 'app');
  mkdirSync(pkg, { recursive: true });
  writeFileSync(join(repo, 'AGENTS.md'), 'Root: use tabs.\n');
  writeFileSync(join(repo, 'packages', 'AGENTS.md'), '   \n'); // blank: nothing to follow
  writeFileSync(join(pkg, 'AGENTS.md'), 'App: run npm test here.\n');
  const extra = dir('troupe-agents-extra-');
  writeFileSync(join(extra, 'AGENTS.md'), 'Shared library rules.\n');
  // The same file through a link is given once.
  const linked = dir('troupe-agents-linked-');
  symlinkSync(join(extra, 'AGENTS.md'), join(linked, 'AGENTS.md'));
  const none = dir('troupe-agents-none-');

  const found = projectInstructions({ cwd: pkg, additionalDirectories: [extra, linked, none] });
  assert.deepEqual(found.map((f) => [f.path, f.text, f.truncated]), [
    [join(repo, 'AGENTS.md'), 'Root: use tabs.', false],
    [join(pkg, 'AGENTS.md'), 'App: run npm test here.', false],
    [join(extra, 'AGENTS.md'), 'Shared library rules.', false],
  ]);
  // Outside a repository: the cwd's own file only, not its parents'.
  const outside = dir('troupe-agents-plain-');
  const inner = join(outside, 'inner');
  mkdirSync(inner);
  writeFileSync(join(outside, 'AGENTS.md'), 'not mine');
  writeFileSync(join(inner, 'AGENTS.md'), 'mine');
  assert.deepEqual(projectInstructions({ cwd: inner, additionalDirectories: [] }).map((f) => f.text), ['mine']);

  const prompt = systemPrompt({ cwd: pkg, additionalDirectories: [extra] }, found);
  const at = (s: string) => prompt.indexOf(s);
  assert.ok(at('Root: use tabs.') > 0 && at('Root: use tabs.') < at('App: run npm test here.') && at('App: run npm test here.') < at('Shared library rules.'), prompt);
  assert.ok(prompt.includes(`<instructions file="${join(pkg, 'AGENTS.md')}">\nApp: run npm test here.\n</instructions>`), prompt);
  assert.ok(!systemPrompt({ cwd: pkg, additionalDirectories: [] }).includes('AGENTS.md'), 'no files: no instructions section');
});

test('a long file is cut on a character boundary and says so; a FIFO or an unreadable file is skipped', () => {
  const cwd = dir('troupe-agents-long-');
  // "é" is two bytes: the limit falls inside one of them.
  writeFileSync(join(cwd, 'AGENTS.md'), 'a' + 'é'.repeat(MAX_INSTRUCTIONS_BYTES));
  const [long] = projectInstructions({ cwd, additionalDirectories: [] });
  assert.equal(long!.truncated, true);
  assert.equal(long!.text, 'a' + 'é'.repeat(Math.floor((MAX_INSTRUCTIONS_BYTES - 1) / 2)));
  assert.ok(!long!.text.includes('\uFFFD'));
  assert.match(systemPrompt({ cwd, additionalDirectories: [] }, [long!]), /\[… cut: only the beginning of this file is given\]\n<\/instructions>$/);

  const fifo = dir('troupe-agents-fifo-');
  execFileSync('mkfifo', [join(fifo, 'AGENTS.md')]);
  assert.deepEqual(projectInstructions({ cwd: fifo, additionalDirectories: [] }), []);
  const locked = dir('troupe-agents-locked-');
  writeFileSync(join(locked, 'AGENTS.md'), 'secret');
  chmodSync(join(locked, 'AGENTS.md'), 0o000);
  const unreadable = projectInstructions({ cwd: locked, additionalDirectories: [] });
  // root reads anything: then the file is simply given.
  assert.deepEqual(unreadable.map((f) => f.text), process.getuid?.() === 0 ? ['secret'] : []);
});

test('all the files together are given at most MAX_TOTAL_INSTRUCTIONS_BYTES: the one that crosses it is cut, the rest left out and counted', () => {
  const kib = (n: number, c: string) => c.repeat(n * 1024);
  const repo = dir('troupe-agents-total-');
  mkdirSync(join(repo, '.git'));
  const cwd = join(repo, 'app');
  mkdirSync(cwd);
  writeFileSync(join(repo, 'AGENTS.md'), kib(30, 'r'));
  writeFileSync(join(cwd, 'AGENTS.md'), kib(30, 'c'));
  const [x, y] = [dir('troupe-agents-total-x-'), dir('troupe-agents-total-y-')];
  writeFileSync(join(x, 'AGENTS.md'), kib(30, 'x'));
  writeFileSync(join(y, 'AGENTS.md'), 'never read');
  const found = projectInstructions({ cwd, additionalDirectories: [x, y] });
  assert.deepEqual(found.map((f) => [f.text.length, f.truncated]), [[30 * 1024, false], [30 * 1024, false], [MAX_TOTAL_INSTRUCTIONS_BYTES - 60 * 1024, true]]);
  assert.equal(found.omitted, 1);
  assert.match(systemPrompt({ cwd, additionalDirectories: [x, y] }, found), /\[1 more AGENTS\.md file\(s\) left out: the instructions are given at most 65536 bytes\]$/);
});

