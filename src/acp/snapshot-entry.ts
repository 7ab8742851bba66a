/**
 * Entry of the V8 startup snapshot of `troupe acp` (scripts/bundle-acp.js builds it; spec/daemon.md
 * §Child launch). At build time this module and everything `troupe acp` loads is bundled into one
 * CommonJS script and evaluated once under `node --build-snapshot`: the resulting blob holds the
 * initialized heap, so a daemon child started with `node --snapshot-blob acp.blob acp --supervised`
 * skips loading, compiling and evaluating its code (about 70 ms of CPU here).
 *
 * What the snapshot may hold is limited: module evaluation only (nothing here may open a handle,
 * read the environment or start work at build time), builtins only. The vendor SDKs and native
 * addons stay outside: the bundle loads them through `globalThis.__troupeRequire`, set below at run
 * time from the real module resolver.
 */
import { resolve } from 'node:path';
import { startupSnapshot } from 'node:v8';
import { runAcp } from './acp.command.js';

declare global {
  // eslint-disable-next-line no-var
  var __troupeRequire: ((id: string) => unknown) | undefined;
}

startupSnapshot.setDeserializeMainFunction(() => {
  // Resolve packages from the blob's directory (dist/acp-snapshot), as the ESM bundle would from
  // dist/acp-bundle. `node:module` is fetched now, not imported: it is not snapshot-safe.
  const at = process.execArgv.indexOf('--snapshot-blob');
  const { createRequire } = process.getBuiltinModule('node:module');
  globalThis.__troupeRequire = createRequire(at >= 0 && process.execArgv[at + 1] ? resolve(process.execArgv[at + 1]!) : import.meta.url);
  // argv is [node, 'acp', ...options] when started from the blob.
  void runAcp(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
});
