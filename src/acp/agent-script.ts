/**
 * `troupe acp` from the agent script (dist/acp-script/acp.cjs, made by scripts/bundle-acp.js): the
 * whole agent in one CommonJS script, compiled with the V8 code cache the build made of it. With the
 * cache, V8 neither parses nor compiles what the start-up, `initialize`, a first `session/new` and a
 * first turn run: it deserializes their bytecode (about 35 ms less of a cold start here;
 * spec/daemon.md §Child launch).
 *
 * The cache is a shortcut, never a dependency. It is only tried when the build's note says it was
 * made by this Node version and architecture, under this process's node flags (execArgv; the heap
 * budget aside, builtins-first.ts) and the agent's V8 flags (src/acp/v8-flags.ts), and for this
 * very build: the note's build id must be the one on the script's first line, because V8's own
 * check of the source is its length only. V8 checks the rest (its version, its flags) and may still
 * refuse it (`cachedDataRejected`): the script is then compiled from its source. Without a cache
 * that fits, bin/troupe.js starts the agent from the ES module bundle (dist/acp-bundle), as before
 * there was a cache.
 *
 * This module is bundled into dist/acp-script/start.cjs, which bin/troupe.js requires: a CommonJS
 * start spares the process Node's ES module loader (about 7 ms).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { loadBuiltins, loadedBuiltins, resetHeapFlag, withoutHeapFlag } from './builtins-first.js';
import { applyAcpV8Flags } from './v8-flags.js';

export const AGENT_SCRIPT = 'acp.cjs';
/** The note the build writes next to the script: the cache it made, and for which process. */
export const CODE_CACHE_NOTE = 'acp.cjs.json';
/** First line of the script: the build id the note must match. */
export const BUILD_LINE = '//troupe-build ';
/** Set by the build while it makes a cache: the process writes one for its flags there at exit. */
export const CODE_CACHE_OUT_ENV = 'TROUPE_CODE_CACHE_OUT';

export interface CodeCacheNote {
  build: string;
  node: string;
  arch: string;
  /** The cache file, and the node flags (but the heap budget) and the agent's V8 flags it was made under. */
  cache: string;
  execArgv: string[];
  v8Flags: string;
  /** Builtins the run loaded, to load before the agent's V8 flags are set (builtins-first.ts). */
  builtins: string[];
}

/**
 * What became of the code cache: `used`; `rejected` by V8 (the script then runs compiled from its
 * source); `stale` (the note is of another build); `absent` (none for this Node, architecture and
 * flags, or NODE_OPTIONS is set); `writing` (the build is making it). Stale or absent: the agent
 * starts from the ES module bundle instead.
 */
export type CodeCacheUse = 'used' | 'rejected' | 'stale' | 'absent' | 'writing';

export interface AgentModule {
  runAcp(args: string[], startup?: Record<string, unknown>): Promise<number>;
}

function readNote(dir: string): CodeCacheNote | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, CODE_CACHE_NOTE), 'utf8')) as CodeCacheNote;
  } catch {
    return undefined;
  }
}

/** The note, if it is of this Node and architecture. */
function noteFor(dir: string): CodeCacheNote | undefined {
  const note = readNote(dir);
  return note && note.node === process.version && note.arch === process.arch ? note : undefined;
}

/**
 * The cache the build made, if it fits this process: the same node flags but the heap budget (any
 * budget: builtins-first.ts), the same V8 flags, and no NODE_OPTIONS (which may hold V8 flags).
 */
function cacheFor(dir: string, note: CodeCacheNote | undefined, v8Flags: string, env: NodeJS.ProcessEnv): { file: string; build: string } | undefined {
  if (!note || env.NODE_OPTIONS?.trim() || note.v8Flags !== v8Flags) return undefined;
  if (JSON.stringify(withoutHeapFlag()) !== JSON.stringify(note.execArgv)) return undefined;
  return { file: join(dir, note.cache), build: note.build };
}

/**
 * Compiles and evaluates the agent script with its code cache (`v8Flags`: those applied to this
 * process), or, while the build makes the cache (CODE_CACHE_OUT_ENV), without one. Without a cache
 * that fits it returns why, and loads nothing: compiled from its source, the one big script would
 * leave about 3 MiB more of the parser's memory in the process than the ES module bundle does.
 */
export function loadAgentScript(dir: string, env: NodeJS.ProcessEnv, v8Flags: string, note = noteFor(dir)): { agent?: AgentModule; codeCache: CodeCacheUse } {
  const out = env[CODE_CACHE_OUT_ENV];
  const cache = out ? undefined : cacheFor(dir, note, v8Flags, env);
  if (!out && !cache) return { codeCache: 'absent' };
  const filename = join(dir, AGENT_SCRIPT);
  let source: string;
  let cachedData: Buffer | undefined;
  try {
    source = readFileSync(filename, 'utf8');
    if (cache && source.slice(0, source.indexOf('\n')) !== BUILD_LINE + cache.build) return { codeCache: 'stale' };
    cachedData = cache ? readFileSync(cache.file) : undefined;
  } catch {
    return { codeCache: 'absent' };
  }
  // Node's own CommonJS wrapper, on a line of its own so that line numbers stay the file's.
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {\n${source}\n})`, {
    filename,
    lineOffset: -1,
    ...(cachedData ? { cachedData } : {}),
  });
  // Refused (rare: the note matched): the script is compiled from its source by now, so it is used.
  const codeCache: CodeCacheUse = out ? 'writing' : script.cachedDataRejected ? 'rejected' : 'used';
  const module = { exports: {} as AgentModule };
  (script.runInThisContext() as (...a: unknown[]) => void)(module.exports, createRequire(filename), module, filename, dir);
  // Made at exit, so that it holds every function the run compiled (V8 compiles lazily), with the
  // builtins the run loaded next to it (the build puts them in the note).
  if (out) {
    process.once('exit', () => {
      writeFileSync(out, script.createCachedData());
      writeFileSync(`${out}.builtins.json`, JSON.stringify(loadedBuiltins()));
    });
  }
  return { agent: module.exports, codeCache };
}

/**
 * bin/troupe.js's `troupe acp`: Node's builtins first (builtins-first.ts), the agent's V8 flags,
 * then the agent from its script if a code cache fits this process. `started: false` (builtins
 * loaded and flags applied, the agent not): start it from the bundle.
 */
export function startAcp(dir: string, args: string[]): { started: boolean; codeCache: CodeCacheUse } {
  const note = noteFor(dir);
  resetHeapFlag();
  loadBuiltins(note?.builtins ?? []);
  const v8Flags = applyAcpV8Flags(process.env);
  const { agent, codeCache } = loadAgentScript(dir, process.env, v8Flags, note);
  if (!agent) return { started: false, codeCache };
  void agent.runAcp(args, { from: 'agent script', codeCache }).then((code) => {
    process.exitCode = code;
  });
  return { started: true, codeCache };
}
