#!/usr/bin/env node
// Bundles the `troupe acp` agent (compiled to dist/ by tsc) into dist/acp-bundle/: one module for
// the agent and its libraries, plus lazily loaded chunks for the vendor adapters. A `troupe acp`
// process (an editor's agent, every daemon child) then starts about a third faster: Node resolves
// and loads one file instead of hundreds. Vendor SDKs and native modules stay in node_modules.
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

// Chunk names carry content hashes: start clean so that old chunks do not pile up.
rmSync('dist/acp-bundle', { recursive: true, force: true });

const bundled = await build({
  entryPoints: ['dist/src/acp/acp.command.js'],
  outdir: 'dist/acp-bundle',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  // Less to parse at every start (the bundle is compiled on every spawn); function and class names
  // are kept so that stack traces stay readable, and the source map maps them back.
  minify: true,
  keepNames: true,
  logLevel: 'warning',
  external: ['@anthropic-ai/sdk', 'openai', '@google/genai', 'uWebSockets.js', 'msgpackr-extract', 'bufferutil', 'utf-8-validate'],
  // Some bundled CommonJS dependencies call require(): give the ES module one.
  banner: { js: "import { createRequire as __troupeRequire } from 'node:module'; const require = __troupeRequire(import.meta.url);" },
  metafile: true,
});
// `import { z } from 'zod'` makes esbuild keep zod's whole namespace, with every locale (about
// 370 KB, half the bundle, parsed at every start for nothing); `import * as z from 'zod'` does not.
const inOutput = Object.values(bundled.metafile.outputs).flatMap((o) => Object.entries(o.inputs).filter(([, i]) => i.bytesInOutput > 0).map(([f]) => f));
const locales = inOutput.filter((f) => /zod\/v4\/locales\/(?!en\.js)/.test(f));
if (locales.length) throw new Error(`the acp bundle holds zod's locales (${locales.length} files): import zod as \`import * as z from 'zod'\`, not \`import { z } from 'zod'\``);

// The V8 startup snapshot of the same agent, for the daemon's children (spec/daemon.md §Child
// launch): one CommonJS script (a snapshot cannot load modules), evaluated once under
// `node --build-snapshot`; the blob holds the initialized heap. It only works with the Node binary
// that built it, so it is built here, on the machine, next to a note of that binary, never committed.
// If it cannot be built, the daemon uses the bundle above: a warning, not a failure.
const SNAPSHOT_DIR = 'dist/acp-snapshot';
rmSync(SNAPSHOT_DIR, { recursive: true, force: true });
const outside = ['@anthropic-ai/sdk', 'openai', '@google/genai', 'msgpackr-extract'];
const outsidePattern = new RegExp(`^(${outside.map((p) => p.replace(/[/.]/g, '\\$&')).join('|')})($|/)`);
try {
  await build({
    entryPoints: ['dist/src/acp/snapshot-entry.js'],
    outfile: `${SNAPSHOT_DIR}/acp-snapshot.cjs`,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    minify: true,
    keepNames: true,
    logLevel: 'error',
    // No import.meta in a script: the bundle's own URL, known while the snapshot is built.
    define: { 'import.meta.url': 'globalThis.__troupeMetaUrl' },
    banner: { js: "globalThis.__troupeMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
    plugins: [
      {
        // Vendor SDKs and native addons are loaded at run time, from node_modules, through the
        // resolver snapshot-entry.ts installs; a snapshot can hold neither.
        name: 'outside-the-snapshot',
        setup(b) {
          b.onResolve({ filter: outsidePattern }, (a) => ({ path: a.path, namespace: 'outside' }));
          b.onLoad({ filter: /.*/, namespace: 'outside' }, (a) => ({
            contents:
              a.path === 'msgpackr-extract'
                ? // msgpackr installs its native string extractor at load (build) time: hand it one
                  // that loads the addon on first use; if that fails, msgpackr reads strings in JS.
                  `let x; module.exports = { extractStrings: (...a) => (x ??= globalThis.__troupeRequire('msgpackr-extract')).extractStrings(...a) };`
                : `module.exports = globalThis.__troupeRequire(${JSON.stringify(a.path)});`,
            loader: 'js',
          }));
        },
      },
    ],
  });
  const blob = `${SNAPSHOT_DIR}/acp.blob`;
  // V8 refuses a snapshot started with other heap flags than it was built with: build it with the
  // daemon's default child budget (--child-memory-mb 512); other budgets start from the bundle.
  const v8Flags = ['--max-old-space-size=512'];
  const made = spawnSync(process.execPath, [...v8Flags, '--snapshot-blob', blob, '--build-snapshot', `${SNAPSHOT_DIR}/acp-snapshot.cjs`], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`node --build-snapshot exited ${made.status}: ${(made.stderr || '').trim().split('\n').slice(-5).join(' | ')}`);
  // Which binary may start it (the daemon checks this before using the blob).
  writeFileSync(`${SNAPSHOT_DIR}/acp.blob.json`, JSON.stringify({ node: process.version, execPath: process.execPath, arch: process.arch, v8Flags }) + '\n');
} catch (err) {
  rmSync(SNAPSHOT_DIR, { recursive: true, force: true });
  process.stderr.write(`bundle-acp: no startup snapshot (${err.message}); daemon children will start from the bundle\n`);
}
