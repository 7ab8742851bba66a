/**
 * A bounded walk over the files below a directory, for glob and grep. It never leaves the
 * workspace: symlinked directories are not descended into (that is also what keeps loops out),
 * and a symlinked file is reported only when its real target lies inside the workspace.
 */
import type { Dirent } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { PathGuard } from './path-guard.js';

/** Directories skipped unless the caller asks for them. */
export const IGNORED_DIRS: ReadonlySet<string> = new Set(['.git', 'node_modules']);

export interface WalkOptions {
  guard: PathGuard;
  /** Skip directories with these names (not the start directory itself). */
  skipDirs: ReadonlySet<string>;
  /** Stop after examining this many directory entries. */
  maxEntries: number;
  signal: AbortSignal;
}

export interface WalkStats {
  /** Directory entries examined. */
  examined: number;
  /** The walk stopped at `maxEntries`. */
  exhausted: boolean;
  /** Symlinks skipped because they lead outside the workspace, loop, or dangle. */
  skippedLinks: number;
}

export interface WalkedFile {
  /** Absolute path (lexical, below the start directory). */
  path: string;
  /** Relative to the start directory, with `/` separators. */
  rel: string;
}

export async function* walkFiles(start: string, options: WalkOptions, stats: WalkStats): AsyncGenerator<WalkedFile> {
  const pending = [start];
  while (pending.length > 0) {
    if (options.signal.aborted) return;
    const dir = pending.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue; // unreadable directory: nothing to report from it
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: string[] = [];
    for (const entry of entries) {
      if (stats.examined >= options.maxEntries) {
        stats.exhausted = true;
        return;
      }
      stats.examined++;
      const path = join(dir, entry.name);
      const rel = relative(start, path).split(sep).join('/');
      if (entry.isDirectory()) {
        if (!options.skipDirs.has(entry.name)) subdirs.push(path);
      } else if (entry.isFile()) {
        yield { path, rel };
      } else if (entry.isSymbolicLink()) {
        if (await isFileInside(path, options.guard)) yield { path, rel };
        else stats.skippedLinks++;
      }
    }
    // Reversed so that the first subdirectory (by name) is walked next.
    for (let i = subdirs.length - 1; i >= 0; i--) pending.push(subdirs[i]!);
  }
}

async function isFileInside(link: string, guard: PathGuard): Promise<boolean> {
  try {
    const real = await realpath(link);
    return guard.containsReal(real) && (await stat(real)).isFile();
  } catch {
    return false;
  }
}
