/**
 * Entry of the V8 startup snapshot of `troupe acp` (scripts/bundle-acp.js builds it; spec/daemon.md
 * §Child launch). At build time this module and everything `troupe acp` loads is bundled into one
 * CommonJS script and evaluated once under `node --build-snapshot`: the resulting blob holds the
 * initialized heap, so a daemon child started with `node --snapshot-blob acp.blob acp --supervised`
 * skips loading, compiling and evaluating its code (about 70 ms of CPU here). Before the heap is
 * taken, the session machinery runs once (snapshot-warm-up.ts), so that it is held compiled too.
 *
 * What the snapshot may hold is limited: builtins only, no open handle, and nothing that must differ
 * between processes. The vendor SDKs and native addons stay outside: the bundle loads them through
 * `globalThis.__troupeRequire`, set below at run time from the real module resolver. Math.random is
 * reseeded on deserialization, but `crypto.randomUUID` keeps a cache of random bytes in the heap:
 * used at build time, every child would draw the same ids, so the build refuses it.
 */
import crypto from 'node:crypto';
import { resolve } from 'node:path';
import { startupSnapshot } from 'node:v8';
import { runAcp } from './acp.command.js';
import { snapshotWarmUp } from './snapshot-warm-up.js';
import { applyAcpV8Flags } from './v8-flags.js';

declare global {
  // eslint-disable-next-line no-var
  var __troupeRequire: ((id: string) => unknown) | undefined;
}

const randomUUID = crypto.randomUUID;
const web = globalThis.crypto as { randomUUID: unknown };
const webRandomUUID = web.randomUUID;
const refuse = () => {
  throw new Error('crypto.randomUUID at snapshot build time: every child would share its cached entropy');
};
(crypto as { randomUUID: unknown }).randomUUID = refuse;
web.randomUUID = refuse;
void snapshotWarmUp().then(
  () => {
    (crypto as { randomUUID: unknown }).randomUUID = randomUUID;
    web.randomUUID = webRandomUUID;
  },
  (err: unknown) => {
    // A failed build is better than a snapshot in an unknown state: scripts/bundle-acp.js then
    // falls back to the bundle.
    process.stderr.write(`snapshot warm-up failed: ${String((err as Error)?.stack ?? err)}\n`);
    process.exit(1);
  },
);

startupSnapshot.setDeserializeMainFunction(() => {
  applyAcpV8Flags(process.env);
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
