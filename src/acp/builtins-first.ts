/**
 * Node's builtin modules (net, streams, crypto, zlib, child_process, …) come with a V8 code cache
 * built into the node binary under V8's default flags, and V8 refuses a code cache made under other
 * flags: under any V8 flag (a daemon child's `--max-old-space-size`, the agent's own flags,
 * src/acp/v8-flags.ts) every builtin loaded from then on is compiled from its source, about 11 ms of
 * a cold start here. So before anything else a `troupe acp` process started by bin/troupe.js
 * (src/acp/agent-script.ts):
 * - puts `--max-old-space-size` back to V8's default: V8 sized the heap from it when the process
 *   started and reads it no more (the limit holds, test/integration/daemon/daemon-child-lifecycle);
 *   only the flags' hash, which code caches are checked against, is the default one again;
 * - loads the builtins that its start-up and first turn load, which the build's runs recorded
 *   (CodeCacheNote.builtins), under the default flags;
 * and only then sets its own V8 flags.
 */
import { builtinModules, createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';

const HEAP_FLAG = '--max-old-space-size';
const isHeapFlag = (arg: string) => arg.startsWith(`${HEAP_FLAG}=`);

/** The heap flag back to its default, if the process was started with it. */
export function resetHeapFlag(execArgv: readonly string[] = process.execArgv): void {
  if (execArgv.some(isHeapFlag)) setFlagsFromString(`${HEAP_FLAG}=0`);
}

/** Node's flags but the heap flag: once it is reset, the heap budget makes no difference to V8's flags. */
export function withoutHeapFlag(execArgv: readonly string[] = process.execArgv): string[] {
  return execArgv.filter((a) => !isHeapFlag(a));
}

/** Loads these builtins now (ids Node does not know are skipped). */
export function loadBuiltins(ids: readonly string[]): void {
  // Any absolute path will do for builtins.
  const require = createRequire(`${process.cwd()}/`);
  for (const id of ids) if (builtinModules.includes(id)) require(id);
}

/** The builtins (public ids) this process has loaded so far: what a build's run records. */
export function loadedBuiltins(): string[] {
  const known = new Set(builtinModules);
  // Node's own record of what it loaded, in order (not in its typings).
  return (process as unknown as { moduleLoadList: string[] }).moduleLoadList.flatMap((m) => {
    const id = m.startsWith('NativeModule ') ? m.slice('NativeModule '.length) : '';
    return known.has(id) ? [id] : [];
  });
}
