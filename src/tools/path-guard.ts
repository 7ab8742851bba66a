/**
 * The path guard: every path a tool touches must resolve, after following every symlink, inside
 * the session cwd or one of its additional directories.
 *
 * Resolution is done on the real file system, also for paths that do not exist yet: the existing
 * prefix is resolved component by component (following symlinks, dangling ones included, because
 * writing through a dangling symlink creates its target), and the missing rest is appended. A
 * symlink chain longer than {@link MAX_SYMLINK_HOPS} is reported as a loop.
 *
 * What passes the guard is the *lexical* absolute path (what the user and the editor know the file
 * by); the check itself is done on its real path. Both name the same file at check time.
 */
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { lstat, readlink, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { TroupeError } from '../core/errors.js';
import { abbreviatedPath, errnoOf, pathTooLongError } from './tool.js';
import { kernelDirectory } from './kernel-directory.js';
import { BIDI_CONTROLS } from '../core/one-line.js';

/**
 * Characters that would break a line of tool output, or hide in it: C0 and C1 controls, DEL,
 * U+2028/2029, and bidi overrides and isolates (U+202A–U+202E, U+2066–U+2069), which make a name read
 * as another (`\u202Etxt.exe` shown as `exe.txt`, "Trojan Source"; shown as they are until 2026-12-07).
 */
const UNPRINTABLE = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029${BIDI_CONTROLS}]`);
/** What JSON.stringify leaves as it is of those (it escapes C0 itself). */
const LEFT_BY_JSON = new RegExp(`[\\u007f-\\u009f\\u2028\\u2029${BIDI_CONTROLS}]`, 'g');

/**
 * A file name (or path) as tool output shows it: as it is, unless it holds a character above. A
 * newline in a name would fake a line of a listing (a file `a\nb` shown as `a` and `b`); such a name
 * is shown as a JSON string literal (`"a\nb"`), which a model can copy into a tool call's arguments
 * to name the file. A name that starts with `"` is quoted too, so that a quoted name always means one.
 */
export function shownName(name: string): string {
  if (!UNPRINTABLE.test(name) && !name.startsWith('"')) return name;
  return JSON.stringify(name).replace(LEFT_BY_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Linux's bounds: a name (one segment) of at most 255 bytes (NAME_MAX), a path of at most 4095 (PATH_MAX, 4096 with its NUL). */
const NAME_MAX_BYTES = 255;
const PATH_MAX_BYTES = 4095;

/**
 * Refuses a path no system call can take, saying which part is too long without repeating it all.
 * Other systems' lower bounds (macOS PATH_MAX is 1024) and a real path made too long by a symlink
 * give ENAMETOOLONG later, which is reported the same way.
 */
function refuseTooLong(path: string, input: string): void {
  const bytes = Buffer.byteLength(path);
  if (bytes > PATH_MAX_BYTES) throw pathTooLongError(shownName(input), `the path is ${bytes} bytes long, over the ${PATH_MAX_BYTES}-byte limit for a path`);
  const name = path.split(sep).find((n) => Buffer.byteLength(n) > NAME_MAX_BYTES);
  if (name === undefined) return;
  const why = `its name ${abbreviatedPath(shownName(name))} is ${Buffer.byteLength(name)} bytes long, over the ${NAME_MAX_BYTES}-byte limit for one name`;
  throw pathTooLongError(shownName(input), why);
}

/** Same bound as Linux's ELOOP limit. */
export const MAX_SYMLINK_HOPS = 40;

export interface GuardedPath {
  /** Absolute, normalised, symlinks not resolved: what to show and to hand to a backend. */
  path: string;
  /** The real path (symlinks resolved; a not-yet-existing tail appended as is). */
  real: string;
  /** Whether something exists at the path. */
  exists: boolean;
}

function loopError(input: string): TroupeError {
  return new TroupeError('tool_failed', `Cannot resolve ${shownName(input)}: too many levels of symbolic links (a symlink loop).`, { path: input });
}

/**
 * Whether `child` is `parent` or inside it (both absolute and normalised). Only a `..` *segment*
 * leads out: until 2026-12-06 any relative path starting with the two characters did, so a file or
 * directory named `..data` (Kubernetes volume mounts have one), `...` or `..env` in the workspace was
 * refused as outside it.
 */
export function isWithin(parent: string, child: string): boolean {
  if (child === parent) return true;
  const rel = relative(parent, child);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/**
 * Resolves `abs` like the kernel would, tolerating a missing tail. Throws the loop error after
 * too many symlink hops.
 */
async function resolveReal(abs: string, input: string): Promise<{ real: string; exists: boolean }> {
  try {
    return { real: await realpath(abs), exists: true };
  } catch (err) {
    const code = errnoOf(err);
    if (code === 'ELOOP') throw loopError(input);
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
  }
  // Slow path: walk the components ourselves so a dangling symlink is followed, not ignored.
  let hops = 0;
  let pending = abs.split(sep).filter(Boolean);
  let current: string = sep;
  while (pending.length > 0) {
    const name = pending.shift()!;
    // `current` is always fully resolved, so `..` here means its real parent, as for the kernel.
    if (name === '.') continue;
    if (name === '..') {
      current = dirname(current);
      continue;
    }
    const next = join(current, name);
    let stats;
    try {
      stats = await lstat(next);
    } catch (err) {
      const code = errnoOf(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') return { real: join(next, ...pending), exists: false };
      throw err;
    }
    if (!stats.isSymbolicLink()) {
      current = next;
      continue;
    }
    if (++hops > MAX_SYMLINK_HOPS) throw loopError(input);
    // Not normalised lexically: `link/..` inside a target must climb from the link's real target.
    const target = await readlink(next);
    pending = [...target.split(sep).filter(Boolean), ...pending];
    if (isAbsolute(target)) current = sep;
  }
  return { real: current, exists: true };
}

/** A last path segment that is empty, `.` or `..`. */
const NAMES_A_DIRECTORY = /(?:^|\/)\.{0,2}$/;

/**
 * Refuses a path that names a directory by its form: `dir/`, `dir/.` and `a/b/..` normalise to a
 * plain path, so without this `a.txt/` would read the file a.txt (the kernel says ENOTDIR) and
 * `new/` would be written as a file named `new`. `input` is the path as the model gave it.
 */
export function refuseDirectoryName(input: string, shown: string, tool: 'read_file' | 'edit_file' | 'write_file'): void {
  if (!NAMES_A_DIRECTORY.test(input)) return;
  // A model that meant the directory is told what reads one; one that meant to write has a name to fix.
  const hint = tool === 'write_file' ? '' : ' (list_dir lists a directory)';
  throw new TroupeError('tool_failed', `${shownName(input)} names a directory (it ends with "/", "." or ".."); ${tool} needs a file path${hint}.`, { path: shown });
}

function assertAbsoluteDirectories(dirs: readonly string[]): void {
  for (const dir of dirs) {
    if (!isAbsolute(dir)) throw new TroupeError('invalid_params', `Additional directories must be absolute paths, got ${JSON.stringify(dir)}.`);
  }
}

export class PathGuard {
  private readonly directories: () => readonly string[];
  /** The cwd as the kernel names it ({@link kernelDirectory}): the base of relative paths, the first root. */
  readonly base: string;
  /** The roots for one list of additional directories (a session/load may give a new list). */
  private resolved?: { of: readonly string[]; roots: readonly string[]; realRoots: readonly string[] };

  /**
   * `additionalDirectories`: a list, or a function that gives the session's list as it is now (the
   * roots are resolved again only when it gives another list).
   */
  constructor(
    readonly cwd: string,
    additionalDirectories: readonly string[] | (() => readonly string[]) = [],
  ) {
    if (!isAbsolute(cwd)) throw new TroupeError('invalid_params', `The session cwd must be an absolute path, got ${JSON.stringify(cwd)}.`);
    if (typeof additionalDirectories !== 'function') assertAbsoluteDirectories(additionalDirectories);
    this.directories = typeof additionalDirectories === 'function' ? additionalDirectories : () => additionalDirectories;
    this.base = kernelDirectory(cwd);
  }

  private current(): { of: readonly string[]; roots: readonly string[]; realRoots: readonly string[] } {
    const dirs = this.directories();
    if (this.resolved?.of === dirs) return this.resolved;
    assertAbsoluteDirectories(dirs);
    const roots = [this.base, ...dirs.map(kernelDirectory)];
    // Real paths resolved once per list: the workspace does not move while it is in use.
    const realRoots = roots.map((root) => {
      try {
        // A root that is itself a symlink counts by its target, as the kernel resolves it: the
        // system's realpath, as check() uses (node:fs/promises realpath is it too). Node's JavaScript
        // realpathSync drops a `link/..` in a link's target as text, before following `link`, so a
        // root `ws -> link/..` was the directory holding the links (until 2026-12-07).
        return realpathSync.native(root);
      } catch {
        return root;
      }
    });
    return (this.resolved = { of: dirs, roots, realRoots });
  }

  /** Lexical roots (as given, made absolute, a `..` taken as the kernel takes it), cwd first. */
  get roots(): readonly string[] {
    return this.current().roots;
  }

  /**
   * The lexical absolute path of `input` (relative to the cwd), with no file-system access. `~` and
   * `~/…` are the home directory, as in a shell: models write them so, and taken literally they
   * would make a directory named `~` in the workspace.
   */
  lexical(input: string): string {
    if (input === '~' || input.startsWith('~/')) return resolve(homedir(), input.slice(2));
    return resolve(this.base, input);
  }

  /** A path for people and models: relative to the cwd when inside it, else absolute ({@link shownName}). */
  display(abs: string): string {
    if (!isWithin(this.base, abs)) return shownName(abs);
    return shownName(relative(this.base, abs) || '.');
  }

  /** Whether a real path lies inside a real root. */
  containsReal(real: string): boolean {
    return this.current().realRoots.some((root) => isWithin(root, real));
  }

  /** The root (lexical, and its real path) a checked real path lies in, the innermost if several hold it. */
  rootOf(real: string): { root: string; realRoot: string } | undefined {
    const { roots, realRoots } = this.current();
    let best: number | undefined;
    realRoots.forEach((r, i) => {
      if (isWithin(r, real) && (best === undefined || r.length > realRoots[best]!.length)) best = i;
    });
    return best === undefined ? undefined : { root: roots[best]!, realRoot: realRoots[best]! };
  }

  /**
   * Resolves `input` and checks it. Throws TroupeError `path_outside_workspace` when it (or a
   * symlink on the way) leads outside every root, `invalid_params` for an empty or NUL-bearing
   * path, and `tool_failed` for a symlink loop or a path too long for the system.
   */
  async check(input: string): Promise<GuardedPath> {
    if (input.length === 0 || input.includes('\0')) throw new TroupeError('invalid_params', `Invalid path ${JSON.stringify(input)}.`);
    const path = this.lexical(input);
    refuseTooLong(path, input);
    const { real, exists } = await resolveReal(path, input).catch((err: unknown) => {
      throw errnoOf(err) === 'ENAMETOOLONG' ? pathTooLongError(shownName(input)) : err;
    });
    if (!this.containsReal(real)) {
      throw new TroupeError(
        'path_outside_workspace',
        `Refused: ${shownName(input)} resolves to ${shownName(real)}, outside the workspace (${this.roots.map(shownName).join(', ')}).`,
        { path: input },
      );
    }
    return { path, real, exists };
  }
}
