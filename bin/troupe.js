#!/usr/bin/env node
// Tiny shim: the real entry point is compiled TypeScript. `troupe acp` (what editors and every daemon
// child run) starts from the bundle in dist/acp-bundle when it is at least as new as the compiled
// code, so a plain `tsc` rebuild is never shadowed by a stale bundle.
import { statSync } from 'node:fs';

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

// Set before the agent's code loads, so that they hold for all of it (src/acp/v8-flags.ts).
if (args[0] === 'acp') (await import('../dist/src/acp/v8-flags.js')).applyAcpV8Flags(process.env);
if (args[0] === 'acp' && fresh()) {
  import(bundle.href).then(async (m) => {
    process.exitCode = await m.runAcp(args.slice(1));
  });
} else {
  import('../dist/src/main.js').then((m) => m.main(args));
}
