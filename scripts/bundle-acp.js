#!/usr/bin/env node
// Bundles the `troupe acp` agent (compiled to dist/ by tsc) twice, each the agent and its libraries
// with the vendor SDKs and native modules left in node_modules, so that a `troupe acp` process (an
// editor's agent, every daemon child) reads a few files instead of hundreds:
// - dist/acp-script/: one CommonJS script, acp.cjs, and the V8 code cache that lets a process skip
//   compiling it (src/acp/agent-script.ts, which is start.cjs);
// - dist/acp-bundle/: an ES module bundle, each vendor adapter in a chunk loaded on first use, for
//   a process that no code cache fits.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { AGENT_SCRIPT, BUILD_LINE, CODE_CACHE_NOTE, CODE_CACHE_OUT_ENV } from '../dist/src/acp/agent-script.js';
import { DEFAULT_ACP_V8_FLAGS } from '../dist/src/acp/v8-flags.js';

const VENDORS = ['@anthropic-ai/sdk', 'openai', '@google/genai'];
/** Loaded from node_modules at run time: the vendor SDKs (on first use) and native modules. */
const EXTERNAL = [...VENDORS, '@modelcontextprotocol/sdk', 'uWebSockets.js', 'bufferutil', 'utf-8-validate'];
// No keepNames: it gives ~2,700 functions a `name` property of their own, ~1.4 MiB of every child's private
// memory; logged stacks are mapped back to the source instead (src/core/bundled-stack.ts).
const common = { bundle: true, format: 'cjs', platform: 'node', target: 'node20', minify: true, logLevel: 'warning' };

/**
 * msgpackr installs its native string extractor when it loads: hand it one that loads the addon on
 * first use (a start decodes nothing, and loading the addon costs a few ms). If the addon cannot be
 * loaded, the extractor throws, and msgpackr reads those strings in JS. `requireExpr` is read at
 * first use: the snapshot's resolver only exists at run time, not while the snapshot is built.
 */
const lazyExtractor = (requireExpr) => ({
  name: 'lazy-msgpackr-extract',
  setup(b) {
    b.onResolve({ filter: /^msgpackr-extract$/ }, (a) => ({ path: a.path, namespace: 'lazy-extractor' }));
    b.onLoad({ filter: /.*/, namespace: 'lazy-extractor' }, () => ({
      contents: `let x;
const load = (r = ${requireExpr}) => { if (typeof r !== 'function') return undefined; try { return r('msgpackr-extract'); } catch { return null; } };
module.exports = { extractStrings(...a) { if (x === undefined) x = load(); if (!x) throw new Error('msgpackr-extract is unavailable'); return x.extractStrings(...a); } };`,
      loader: 'js',
    }));
  },
});

// Chunk names carry content hashes: start clean so that old chunks do not pile up.
rmSync('dist/acp-bundle', { recursive: true, force: true });
await build({
  ...common,
  entryPoints: ['dist/src/acp/acp.command.js'],
  outdir: 'dist/acp-bundle',
  splitting: true,
  format: 'esm',
  sourcemap: true,
  external: EXTERNAL,
  // Some bundled CommonJS dependencies call require(): give the ES module one.
  banner: { js: "import { createRequire as __troupeRequire } from 'node:module'; const require = __troupeRequire(import.meta.url);" },
  plugins: [lazyExtractor('require')],
});

// The agent script. Its first line is the build id that the note of its code caches must match.
const SCRIPT_DIR = 'dist/acp-script';
rmSync(SCRIPT_DIR, { recursive: true, force: true });
const buildId = randomUUID();
const bundled = await build({
  ...common,
  entryPoints: ['dist/src/acp/acp.command.js'],
  outfile: `${SCRIPT_DIR}/${AGENT_SCRIPT}`,
  sourcemap: true,
  external: EXTERNAL,
  define: { 'import.meta.url': '__troupeMetaUrl' },
  banner: { js: `${BUILD_LINE}${buildId}\nvar __troupeMetaUrl = require('node:url').pathToFileURL(__filename).href;` },
  plugins: [lazyExtractor('require')],
  metafile: true,
});
// `import { z } from 'zod'` makes esbuild keep zod's whole namespace, with every locale (about
// 370 KB, half the bundle, parsed at every start for nothing); `import * as z from 'zod'` does not.
const inOutput = Object.values(bundled.metafile.outputs).flatMap((o) => Object.entries(o.inputs).filter(([, i]) => i.bytesInOutput > 0).map(([f]) => f));
const locales = inOutput.filter((f) => /zod\/v4\/locales\/(?!en\.js|index\.js)/.test(f));
if (locales.length) throw new Error(`the acp script holds zod's locales (${locales.length} files): import zod as \`import * as z from 'zod'\`, not \`import { z } from 'zod'\``);
// What bin/troupe.js requires to start it (CommonJS too: no ES module loader in the process).
await build({ ...common, minify: false, entryPoints: ['dist/src/acp/agent-script.js'], outfile: `${SCRIPT_DIR}/start.cjs` });

/**
 * The code cache, made by a real run of the agent (as a daemon child: supervised, with the default
 * `--child-memory-mb 512`) that serves `initialize`, one `session/new` and a one-line prompt (the
 * offline scripted/replay model) in a scratch home, then writes, at exit, the cache of everything it
 * compiled: the start-up path and a first turn, and no more (a cache holds bytecode that every
 * process loads, and keeps until V8 flushes it; the turn costs an idle process about 0.1 MiB and
 * saves a first prompt about 5 ms). It serves editors' processes too: V8 checks a cache against
 * its flags, and once src/acp/builtins-first.ts has put the heap flag back to its default, any heap
 * budget, or none, makes the same flags. It is only valid under the V8 flags it was made with, and
 * the agent's own (TROUPE_ACP_V8_FLAGS) are left at their default here.
 */
const CACHE = 'acp.cache';

function makeCodeCache() {
  const home = mkdtempSync(join(tmpdir(), 'troupe-code-cache-'));
  const script = join(home, 'script.json');
  writeFileSync(script, JSON.stringify({ replies: [{ when: 'hello', items: [{ text: 'hello' }] }] }));
  const out = join(SCRIPT_DIR, CACHE);
  const child = spawn(process.execPath, ['--max-old-space-size=512', 'bin/troupe.js', 'acp', '--supervised'], {
    env: { PATH: process.env.PATH ?? '', HOME: home, TROUPE_HOME: home, TROUPE_MODEL: 'scripted/replay', TROUPE_SCRIPT: script, [CODE_CACHE_OUT_ENV]: out },
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
  });
  child.stdio[3].resume();
  let stderr = '';
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-2000)));
  const send = (id, method, params) => child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve, reject) => {
    let lines = '';
    child.stdout.on('data', (d) => {
      lines += d;
      for (let nl; (nl = lines.indexOf('\n')) >= 0; lines = lines.slice(nl + 1)) {
        const msg = JSON.parse(lines.slice(0, nl));
        if (msg.error) return reject(new Error(`${['initialize', 'session/new', 'session/prompt'][msg.id - 1]}: ${msg.error.message}`));
        if (msg.id === 1) send(2, 'session/new', { cwd: home, mcpServers: [] });
        if (msg.id === 2) send(3, 'session/prompt', { sessionId: msg.result.sessionId, prompt: [{ type: 'text', text: 'hello' }] });
        if (msg.id === 3) child.stdin.end();
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      rmSync(home, { recursive: true, force: true });
      if (code !== 0 || !existsSync(out)) return reject(new Error(`the run exited ${signal ?? code}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`));
      // The builtins the run loaded (src/acp/builtins-first.ts), in the order it loaded them.
      const builtins = JSON.parse(readFileSync(`${out}.builtins.json`, 'utf8'));
      rmSync(`${out}.builtins.json`);
      resolve({ build: buildId, node: process.version, arch: process.arch, cache: CACHE, execArgv: [], v8Flags: DEFAULT_ACP_V8_FLAGS, builtins });
    });
    send(1, 'initialize', { protocolVersion: 1, clientCapabilities: {} });
  });
}

try {
  const note = await makeCodeCache();
  writeFileSync(`${SCRIPT_DIR}/${CODE_CACHE_NOTE}`, JSON.stringify(note, null, 1) + '\n');
} catch (err) {
  for (const f of [CACHE, `${CACHE}.builtins.json`]) rmSync(join(SCRIPT_DIR, f), { force: true });
  process.stderr.write(`bundle-acp: no code cache (${err.message}); troupe acp starts from the ES module bundle\n`);
}

// The V8 startup snapshot of the same agent, for the daemon's children (spec/daemon.md §Child
// launch): one CommonJS script (a snapshot cannot load modules), evaluated once under
// `node --build-snapshot`; the blob holds the initialized heap. It only works with the Node binary
// that built it, so it is built here, on the machine, next to a note of that binary, never committed.
// If it cannot be built, children start as `troupe acp` does: a warning, not a failure.
const SNAPSHOT_DIR = 'dist/acp-snapshot';
rmSync(SNAPSHOT_DIR, { recursive: true, force: true });
const vendorPattern = new RegExp(`^(${VENDORS.map((p) => p.replace(/[/.]/g, '\\$&')).join('|')})($|/)`);
try {
  await build({
    ...common,
    entryPoints: ['dist/src/acp/snapshot-entry.js'],
    outfile: `${SNAPSHOT_DIR}/acp-snapshot.cjs`,
    logLevel: 'error',
    // No import.meta in a script: the bundle's own URL, known while the snapshot is built.
    define: { 'import.meta.url': 'globalThis.__troupeMetaUrl' },
    banner: { js: "globalThis.__troupeMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
    plugins: [
      // Vendor SDKs and native addons are loaded at run time, from node_modules, through the
      // resolver snapshot-entry.ts installs; a snapshot can hold neither.
      lazyExtractor('globalThis.__troupeRequire'),
      {
        name: 'outside-the-snapshot',
        setup(b) {
          b.onResolve({ filter: vendorPattern }, (a) => ({ path: a.path, namespace: 'outside' }));
          b.onLoad({ filter: /.*/, namespace: 'outside' }, (a) => ({ contents: `module.exports = globalThis.__troupeRequire(${JSON.stringify(a.path)});`, loader: 'js' }));
        },
      },
    ],
  });
  const blob = `${SNAPSHOT_DIR}/acp.blob`;
  // V8 refuses a snapshot started with other heap flags than it was built with: build it with the
  // daemon's default child budget (--child-memory-mb 512); other budgets start as `troupe acp` does.
  const v8Flags = ['--max-old-space-size=512'];
  const made = spawnSync(process.execPath, [...v8Flags, '--snapshot-blob', blob, '--build-snapshot', `${SNAPSHOT_DIR}/acp-snapshot.cjs`], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`node --build-snapshot exited ${made.status}: ${(made.stderr || '').trim().split('\n').slice(-5).join(' | ')}`);
  // Which binary may start it (the daemon checks this before using the blob).
  writeFileSync(`${SNAPSHOT_DIR}/acp.blob.json`, JSON.stringify({ node: process.version, execPath: process.execPath, arch: process.arch, v8Flags }) + '\n');
} catch (err) {
  rmSync(SNAPSHOT_DIR, { recursive: true, force: true });
  process.stderr.write(`bundle-acp: no startup snapshot (${err.message}); daemon children will start as troupe acp does\n`);
}
