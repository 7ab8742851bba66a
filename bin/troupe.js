#!/usr/bin/env node
// Tiny shim: the real entry point is compiled TypeScript. `troupe acp` (what editors and every daemon
// child run) starts from what scripts/bundle-acp.js made when it is at least as new as the compiled
// code (so that a plain `tsc` rebuild is never shadowed by a stale bundle): the agent script with
// its V8 code cache when one fits this process (src/acp/agent-script.ts), else the ES module bundle.
// This file is CommonJS (bin/package.json): an ES module entry would make every `troupe acp` set up
// Node's ES module loader before anything else (about 7 ms).
'use strict';
const { statSync } = require('node:fs');
const { join, sep } = require('node:path');

const args = process.argv.slice(2);
const dist = join(__dirname, '..', 'dist');
// An installed copy (under node_modules: a dependency, a global install, npx) is never rebuilt in
// place, and unpacking it gives its files the mtimes of the unpacking, in no particular order.
const installed = __dirname.split(sep).includes('node_modules');

function fresh() {
  try {
    const bundled = statSync(join(dist, 'acp-script/start.cjs')).mtimeMs;
    return installed || bundled >= statSync(join(dist, 'src/acp/acp.command.js')).mtimeMs;
  } catch {
    return false;
  }
}

// Only the agent itself takes this path: `acp --help`, `--version` and `--check` print for a person,
// through src/main.ts and the CLI.
if (args[0] === 'acp' && args.slice(1).every((a) => a === '--supervised') && fresh()) {
  // Applies the agent's V8 flags (src/acp/v8-flags.ts) in any case, before any of its code loads.
  const { started, codeCache } = require(join(dist, 'acp-script/start.cjs')).startAcp(join(dist, 'acp-script'), args.slice(1));
  if (!started) {
    import('../dist/acp-bundle/acp.command.js').then(async (m) => {
      process.exitCode = await m.runAcp(args.slice(1), { from: 'bundle', codeCache });
    });
  }
} else {
  (async () => {
    // Set before the agent's code loads, so that they hold for all of it (src/acp/v8-flags.ts).
    if (args[0] === 'acp') (await import('../dist/src/acp/v8-flags.js')).applyAcpV8Flags(process.env);
    await (await import('../dist/src/main.js')).main(args);
  })();
}
