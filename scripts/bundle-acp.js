#!/usr/bin/env node
// Bundles the `troupe acp` agent (compiled to dist/ by tsc) into dist/acp-bundle/: one module for
// the agent and its libraries, plus lazily loaded chunks for the vendor adapters. A `troupe acp`
// process (an editor's agent, every daemon child) then starts about a third faster: Node resolves
// and loads one file instead of hundreds. Vendor SDKs and native modules stay in node_modules.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

// Chunk names carry content hashes: start clean so that old chunks do not pile up.
rmSync('dist/acp-bundle', { recursive: true, force: true });

await build({
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
});
