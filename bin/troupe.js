#!/usr/bin/env node
// Tiny shim: the real entry point is compiled TypeScript. `troupe acp` (what editors and every daemon
// child run) starts from the bundle in dist/acp-bundle when it is at least as new as the compiled
// code, so a plain `tsc` rebuild is never shadowed by a stale bundle.
import { statSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';

const args = process.argv.slice(2);
const bundle = new URL('../dist/acp-bundle/acp.command.js', import.meta.url);
const compiled = new URL('../dist/src/acp/acp.command.js', import.meta.url);

function fresh() {
  try {
    return statSync(bundle).mtimeMs >= statSync(compiled).mtimeMs;
  } catch {
    return false;
  }
}

// `troupe acp` is a small process that mostly waits on its client (docs/editors.md, "Memory"): keep
// the young generation at its first size (1 MiB semi-spaces, instead of growing to 16 MiB) and let
// only code that stays hot reach the optimizing compiler (5x V8's budget), so that code run once at
// start-up is not compiled twice and its compiler memory kept, and a streamed reply's hot loop is
// compiled once its types have settled, not speculatively and then again (bench/child-stream.ts). Set here, before the agent's code
// loads, so that it holds however the agent is launched; TROUPE_ACP_V8_FLAGS replaces the list.
if (args[0] === 'acp') setFlagsFromString(process.env.TROUPE_ACP_V8_FLAGS ?? '--semi-space-growth-factor=1 --interrupt-budget=337920');
if (args[0] === 'acp' && fresh()) {
  import(bundle.href).then(async (m) => {
    process.exitCode = await m.runAcp(args.slice(1));
  });
} else {
  import('../dist/src/main.js').then((m) => m.main(args));
}
