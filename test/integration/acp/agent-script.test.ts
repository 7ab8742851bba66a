// How `troupe acp` starts (src/acp/agent-script.ts, spec/daemon.md §Child launch): from the agent
// script with the V8 code cache `npm run build` made, as an editor starts it and as a daemon starts
// its children, whatever their heap budget; from the script's source if V8 refuses the cache; from
// the ES module bundle if the cache does not fit (other flags, another build, none), serving the
// same in every case.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { CODE_CACHE_NOTE, type CodeCacheNote } from '../../../src/acp/agent-script.js';

const SCRIPT_DIR = resolve('dist/acp-script');

/**
 * Runs `node [nodeArgs] <entry> acp [args]` through initialize and one session/new, then ends stdin.
 * Returns the responses and how the process said it started (TROUPE_LOG=debug).
 */
async function startAndServe(entry: string, nodeArgs: string[] = [], args: string[] = [], env: Record<string, string> = {}): Promise<{ results: any[]; started: any; code: number | null }> {
  const home = mkdtempSync(join(tmpdir(), 'troupe-home-'));
  const proc = spawn(process.execPath, [...nodeArgs, entry, 'acp', ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: home, TROUPE_HOME: home, TROUPE_LOG: 'debug', ...env },
    stdio: ['pipe', 'pipe', 'pipe', ...(args.includes('--supervised') ? (['pipe'] as const) : [])],
  });
  (proc.stdio[3] as Readable | undefined)?.resume();
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  const results: any[] = [];
  const send = (id: number, method: string, params: unknown) => proc.stdin!.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
  let out = '';
  proc.stdout!.on('data', (d) => {
    out += d;
    for (let nl; (nl = out.indexOf('\n')) >= 0; out = out.slice(nl + 1)) {
      const msg = JSON.parse(out.slice(0, nl));
      if (msg.id === undefined) continue;
      results.push(msg.result ?? msg.error);
      if (msg.id === 1) send(2, 'session/new', { cwd: home, mcpServers: [] });
      else proc.stdin!.end();
    }
  });
  send(1, 'initialize', { protocolVersion: 1, clientCapabilities: {} });
  const code = await new Promise<number | null>((done) => proc.on('close', done));
  const line = stderr.split('\n').find((l) => l.includes('troupe acp: started'));
  return { results, started: line ? JSON.parse(line.slice(line.indexOf('{'))) : undefined, code };
}

function assertServed(r: { results: any[]; code: number | null }): void {
  assert.equal(r.code, 0);
  assert.equal(r.results[0]?.protocolVersion, 1, JSON.stringify(r.results));
  assert.match(r.results[1]?.sessionId ?? '', /^ses_/, JSON.stringify(r.results));
}

test('troupe acp starts from the agent script with the code cache the build made: as an editor starts it, and as a daemon starts its children, whatever their heap budget', async () => {
  const editor = await startAndServe(resolve('bin/troupe.js'));
  assertServed(editor);
  assert.deepEqual(editor.started, { from: 'agent script', codeCache: 'used' });
  for (const budget of [512, 300]) {
    const child = await startAndServe(resolve('bin/troupe.js'), [`--max-old-space-size=${budget}`], ['--supervised']);
    assertServed(child);
    assert.deepEqual(child.started, { from: 'agent script', codeCache: 'used' }, `--max-old-space-size=${budget}`);
  }
  // Other V8 flags: the cache was not made under them.
  const other = await startAndServe(resolve('bin/troupe.js'), ['--stack-size=900']);
  assertServed(other);
  assert.deepEqual(other.started, { from: 'bundle', codeCache: 'absent' });
  const nodeOptions = await startAndServe(resolve('bin/troupe.js'), [], [], { NODE_OPTIONS: '--max-semi-space-size=2' });
  assertServed(nodeOptions);
  assert.deepEqual(nodeOptions.started, { from: 'bundle', codeCache: 'absent' });
});

/**
 * A copy of the build's dist/acp-script, inside dist/ (so that packages and the bundle resolve as
 * they do for the real one), with an entry that starts it as bin/troupe.js does. `spoil` changes it.
 */
function copyOfTheScript(t: { after(f: () => void): void }, spoil: (dir: string, note: CodeCacheNote) => void): string {
  const dir = mkdtempSync(join(resolve('dist'), 'acp-script-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(SCRIPT_DIR, dir, { recursive: true });
  writeFileSync(
    join(dir, 'run.cjs'),
    `const args = process.argv.slice(3);
const { started, codeCache } = require('./start.cjs').startAcp(__dirname, args);
if (!started) import('../acp-bundle/acp.command.js').then(async (m) => (process.exitCode = await m.runAcp(args, { from: 'bundle', codeCache })));
`,
  );
  spoil(dir, JSON.parse(readFileSync(join(dir, CODE_CACHE_NOTE), 'utf8')) as CodeCacheNote);
  return join(dir, 'run.cjs');
}

test('a code cache that V8 refuses is not used: the script is compiled from its source and serves', async (t) => {
  const entry = copyOfTheScript(t, (dir, note) => {
    // Cut short: V8 checks the length of what it deserializes and refuses it.
    const cache = readFileSync(join(dir, note.cache));
    writeFileSync(join(dir, note.cache), cache.subarray(0, cache.length >> 1));
  });
  const r = await startAndServe(entry);
  assertServed(r);
  assert.deepEqual(r.started, { from: 'agent script', codeCache: 'rejected' });
});

test('a code cache of another build is never used, even one V8 would take: the agent starts from the bundle', async (t) => {
  const entry = copyOfTheScript(t, (dir, note) => {
    // Another build's note (its id differs) over this build's own caches, which V8 would accept.
    writeFileSync(join(dir, CODE_CACHE_NOTE), JSON.stringify({ ...note, build: 'another-build' }));
  });
  const r = await startAndServe(entry);
  assertServed(r);
  assert.deepEqual(r.started, { from: 'bundle', codeCache: 'stale' });
});

test('without a note, or with its cache file gone, the agent starts from the bundle', async (t) => {
  const noNote = copyOfTheScript(t, (dir) => rmSync(join(dir, CODE_CACHE_NOTE)));
  const r = await startAndServe(noNote);
  assertServed(r);
  assert.deepEqual(r.started, { from: 'bundle', codeCache: 'absent' });
  const noFile = copyOfTheScript(t, (dir, note) => rmSync(join(dir, note.cache)));
  const s = await startAndServe(noFile);
  assertServed(s);
  assert.deepEqual(s.started, { from: 'bundle', codeCache: 'absent' });
});

test('an installed copy (under node_modules) starts from its agent script whatever the mtimes unpacking gave its files', async (t) => {
  // Inside dist/, so that the script finds the project's packages as an installed one finds its own.
  const root = mkdtempSync(join(resolve('dist'), 'installed-test-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const pkg = join(root, 'node_modules', 'troupe');
  cpSync(resolve('bin'), join(pkg, 'bin'), { recursive: true });
  cpSync(SCRIPT_DIR, join(pkg, 'dist', 'acp-script'), { recursive: true });
  // Unpacked after the script: in a checkout this would mean a newer tsc build, and the script unused.
  mkdirSync(join(pkg, 'dist', 'src', 'acp'), { recursive: true });
  const compiled = join(pkg, 'dist', 'src', 'acp', 'acp.command.js');
  cpSync(resolve('dist/src/acp/acp.command.js'), compiled);
  const later = new Date(Date.now() + 60_000);
  utimesSync(compiled, later, later);
  const r = await startAndServe(join(pkg, 'bin', 'troupe.js'));
  assertServed(r);
  assert.deepEqual(r.started, { from: 'agent script', codeCache: 'used' });
});
