/**
 * Project instructions: the `AGENTS.md` files a project keeps for coding agents (the format Codex,
 * Cursor, Zed's agent and others read), given to the model in the system prompt.
 *
 * Which files, in order (the more specific last, so that it reads as the word that counts):
 * for the cwd, every `AGENTS.md` from the root of its git repository (the nearest directory above
 * with a `.git`) down to the cwd itself, or the cwd's alone outside a repository; then, for each
 * additional directory (ACP's other workspace roots), the `AGENTS.md` at its root, as the RFD asks
 * an agent to treat every root as it treats the cwd. A file is read once per session open, and
 * again when a client gives the session other directories: the system prompt stays the same from
 * step to step (vendors cache it).
 */
import { closeSync, constants, existsSync, fstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Workspace } from '../actors/engine-core.js';

export const INSTRUCTIONS_FILE = 'AGENTS.md';
/** At most this much of each file is given to the model (Codex's `project_doc_max_bytes` default). */
export const MAX_INSTRUCTIONS_BYTES = 32 * 1024;
/** At most this much of all of them: a deep chain of long files must not fill a small context window. */
export const MAX_TOTAL_INSTRUCTIONS_BYTES = 64 * 1024;

export interface ProjectInstructions {
  /** The file, absolute. */
  path: string;
  text: string;
  /** The file was longer than what was left for it (MAX_INSTRUCTIONS_BYTES, or the total): `text` is its beginning. */
  truncated: boolean;
}

/** The directories from the git repository root above `dir` down to `dir` (just `dir` outside one). */
function repositoryChain(dir: string): string[] {
  const chain: string[] = [];
  for (let d = resolve(dir); ; d = dirname(d)) {
    chain.unshift(d);
    if (existsSync(join(d, '.git'))) return chain;
    if (dirname(d) === d) return [resolve(dir)];
  }
}

/** The file's text (at most its first `limit` bytes), if it is a readable regular file. */
function readInstructions(path: string, limit: number): ProjectInstructions | undefined {
  let fd: number | undefined;
  try {
    // Non-blocking: opening a FIFO for reading would wait for a writer. Then only a regular file is read.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const stat = fstatSync(fd);
    if (!stat.isFile()) return undefined;
    const buf = Buffer.alloc(Math.min(stat.size, limit));
    const n = readSync(fd, buf, 0, buf.length, 0);
    // Cut on a character boundary: a split UTF-8 sequence would decode to a replacement mark.
    const text = new TextDecoder().decode(buf.subarray(0, n), { stream: true }).trim();
    return text ? { path, text, truncated: stat.size > limit } : undefined;
  } catch {
    return undefined; // absent or unreadable: nothing to follow
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The session's project instructions, in the order above; each file once (by its real path), each
 * cut at MAX_INSTRUCTIONS_BYTES, and all of them at MAX_TOTAL_INSTRUCTIONS_BYTES (files past it are
 * left out, counted in `omitted`).
 */
export function projectInstructions({ cwd, additionalDirectories }: Workspace): ProjectInstructions[] & { omitted?: number } {
  const seen = new Set<string>();
  const out: ProjectInstructions[] & { omitted?: number } = [];
  let left = MAX_TOTAL_INSTRUCTIONS_BYTES;
  for (const dir of [...repositoryChain(cwd), ...additionalDirectories]) {
    const path = join(dir, INSTRUCTIONS_FILE);
    let real: string;
    try {
      real = realpathSync(path);
    } catch {
      continue;
    }
    if (seen.has(real)) continue;
    seen.add(real);
    if (left <= 0) {
      if (existsSync(path)) out.omitted = (out.omitted ?? 0) + 1;
      continue;
    }
    const found = readInstructions(path, Math.min(MAX_INSTRUCTIONS_BYTES, left));
    if (!found) continue;
    out.push(found);
    left -= Buffer.byteLength(found.text);
  }
  return out;
}
