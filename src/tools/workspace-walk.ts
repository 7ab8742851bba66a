/**
 * A bounded walk over the files below a directory, for glob and grep. It never leaves the
 * workspace: symlinked directories are not descended into (that is also what keeps loops out),
 * and a symlinked file is reported only when its real target lies inside the workspace. What
 * .gitignore files ignore is passed over, unless the caller asks for it (gitignore.ts).
 */
import { isUtf8 } from 'node:buffer';
import type { Dirent } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { firstEntries } from './first-entries.js';
import { isIgnored, readIgnoreLayer, type IgnoreLayer } from './gitignore.js';
import { isWithin, type PathGuard } from './path-guard.js';

/** Directories skipped unless the caller asks for what is ignored. */
const IGNORED_DIRS: ReadonlySet<string> = new Set(['.git', 'node_modules']);

export interface WalkOptions {
  guard: PathGuard;
  /**
   * Also walk what is ignored: otherwise `.git` and `node_modules` directories (not the start
   * directory itself) and what .gitignore files (the start directory's, its parents' up to its
   * root, and below) ignore are passed over.
   */
  includeIgnored: boolean;
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
  /** Entries (files, and directories not walked) passed over because a .gitignore ignores them. */
  ignored: number;
}

/** A fresh count. */
export function walkStats(): WalkStats {
  return { examined: 0, exhausted: false, skippedLinks: 0, ignored: 0 };
}

/** A note for a search that found nothing while .gitignore passed entries over: where else to look. */
export function ignoredNote(stats: WalkStats, found: number): string[] {
  if (found > 0 || stats.ignored === 0) return [];
  return [`[${stats.ignored} ${stats.ignored === 1 ? 'entry' : 'entries'} ignored by .gitignore not searched; include_ignored: true searches them]`];
}

/**
 * The .gitignore layers that apply below `start`: those of the directories from its workspace root
 * down to it (a root's `*.log` holds in any subdirectory searched). Never above the root: the
 * tools read nothing outside the workspace, not even a repository's .gitignore above the cwd.
 */
async function startLayers(start: string, guard: PathGuard): Promise<IgnoreLayer[]> {
  const confine = (real: string) => guard.containsReal(real);
  // The outermost root holding it (an additional directory may lie inside the cwd).
  const root = guard.roots.filter((r) => isWithin(r, start)).sort((a, b) => a.length - b.length)[0] ?? start;
  const dirs: string[] = [];
  for (let dir = start; ; dir = dirname(dir)) {
    dirs.unshift(dir);
    if (dir === root || dir === dirname(dir)) break;
  }
  const layers = await Promise.all(dirs.map((dir) => readIgnoreLayer(dir, confine)));
  return layers.filter((l): l is IgnoreLayer => l !== undefined);
}

export interface WalkedFile {
  /** Absolute path (lexical, below the start directory). */
  path: string;
  /** Relative to the start directory, with `/` separators. */
  rel: string;
  /**
   * The path's bytes, only when a name in it is not UTF-8: `path` and `rel` then hold its U+FFFD
   * reading, which opens nothing, and this is what opens the file.
   */
  raw?: Buffer;
}

/** `dir`/`name` as bytes, when `dir` is already bytes or `name` is not UTF-8; else undefined (the string opens it). */
function rawJoin(dir: string, rawDir: Buffer | undefined, name: Buffer): Buffer | undefined {
  if (!rawDir && isUtf8(name)) return undefined;
  const parent = rawDir ?? Buffer.from(dir);
  return Buffer.concat([parent, Buffer.from(parent[parent.length - 1] === sep.charCodeAt(0) ? '' : sep), name]);
}

/** By name; names whose UTF-8 readings are alike (U+FFFD for different bytes) by their bytes, not in the order the system happens to read them. */
const byName = (a: { name: string; entry: Dirent<Buffer> }, b: { name: string; entry: Dirent<Buffer> }): number =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : Buffer.compare(a.entry.name, b.entry.name);

export async function* walkFiles(start: string, options: WalkOptions, stats: WalkStats): AsyncGenerator<WalkedFile> {
  const confine = (real: string) => options.guard.containsReal(real);
  const gitignore = !options.includeIgnored;
  type Dir = { dir: string; raw?: Buffer; layers: IgnoreLayer[] };
  const pending: Dir[] = [{ dir: start, layers: gitignore ? await startLayers(start, options.guard) : [] }];
  while (pending.length > 0) {
    if (options.signal.aborted) return;
    const { dir, raw: rawDir, layers: above } = pending.pop()!;
    const own = gitignore && dir !== start ? await readIgnoreLayer(dir, confine, rawDir) : undefined;
    const layers = own ? [...above, own] : above;
    let named;
    try {
      // Names as bytes: one that is not UTF-8 opens only so (its UTF-8 reading has U+FFFD for each bad byte).
      // Sorted by name, keeping as many entries as the budget has left and one more, which tells
      // that it ran out, and holding at most twice that, however many the directory has (first-entries.ts).
      const keep = options.maxEntries - stats.examined + 1;
      named = (await firstEntries(rawDir ?? dir, keep, (entry) => ({ entry, name: entry.name.toString('utf8') }), byName, options.signal)).kept;
    } catch {
      continue; // unreadable directory (or a cancel, seen above): nothing to report from it
    }
    const subdirs: Dir[] = [];
    for (const { entry, name } of named) {
      if (stats.examined >= options.maxEntries) {
        stats.exhausted = true;
        return;
      }
      stats.examined++;
      const path = join(dir, name);
      const raw = rawJoin(dir, rawDir, entry.name);
      const rel = relative(start, path).split(sep).join('/');
      if (layers.length > 0 && isIgnored(layers, path, entry.isDirectory())) {
        stats.ignored++;
        continue;
      }
      const file = raw ? { path, rel, raw } : { path, rel };
      if (entry.isDirectory()) {
        if (options.includeIgnored || !IGNORED_DIRS.has(name)) subdirs.push(raw ? { dir: path, raw, layers } : { dir: path, layers });
      } else if (entry.isFile()) {
        yield file;
      } else if (entry.isSymbolicLink()) {
        if (await isFileInside(raw ?? path, options.guard)) yield file;
        else stats.skippedLinks++;
      }
    }
    // Reversed so that the first subdirectory (by name) is walked next.
    for (let i = subdirs.length - 1; i >= 0; i--) pending.push(subdirs[i]!);
  }
}

async function isFileInside(link: string | Buffer, guard: PathGuard): Promise<boolean> {
  try {
    // (A real path that is not UTF-8 reads with U+FFFD, which changes no "/": where it lies still holds.)
    const real = await realpath(link);
    return guard.containsReal(real) && (await stat(link)).isFile();
  } catch {
    return false;
  }
}
