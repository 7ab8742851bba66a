/**
 * Creating a new file's missing parent directories inside the workspace, checked on the directories
 * actually created in.
 *
 * The guard resolved every existing ancestor inside the workspace, but a symlink swapped in for one
 * of them afterwards (by another process) led a plain `mkdir -p` outside: it created empty
 * directories wherever the link pointed (the file itself was then refused, confined-open.ts). Node
 * has no mkdirat, but on Linux `/proc/self/fd/N/<name>` names `<name>` in the very directory open as
 * descriptor N, whatever its path has become. So the deepest existing ancestor is opened and checked
 * by where its descriptor really is (as every opened file is), and each missing level is made in the
 * descriptor of the level above, opened and checked in turn. A symlink swapped in on the way after a
 * level is open changes nothing; one swapped in before is caught by the check, before anything is
 * created. What is left: a directory *moved* out of the workspace (renamed, on the same file system)
 * between its check and the mkdir in it; the level made in it is checked then and removed.
 * Without /proc (macOS) the directories are made by path, as before.
 */
import { constants } from 'node:fs';
import { mkdir, open, rmdir, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { TroupeError } from '../core/errors.js';
import { openedPath, type Confine } from './confined-open.js';
import { shownName } from './path-guard.js';
import { errnoOf } from './tool.js';

const DIRECTORY = constants.O_RDONLY | constants.O_DIRECTORY;

/** Where `handle` (the directory `at`, on the way to `dir`) really is, refused when outside; undefined without /proc. */
async function checkedDirectory(handle: FileHandle, at: string, dir: string, confine: Confine): Promise<string | undefined> {
  const real = await openedPath(handle);
  if (real !== undefined && !confine(real)) {
    throw new TroupeError(
      'path_outside_workspace',
      `Refused: creating ${shownName(dir)}, ${shownName(at)} led to ${shownName(real)}, outside the workspace (a symlink on the way changed after the path was checked); nothing was created there.`,
      { path: dir },
    );
  }
  return real;
}

/** A system error about `/proc/self/fd/N/<name>` told about the path it stands for. */
function named<T>(err: T, procPath: string, absPath: string): T {
  if (err instanceof Error) {
    err.message = err.message.split(procPath).join(absPath);
    if ('path' in err && err.path === procPath) err.path = absPath;
  }
  return err;
}

/**
 * `mkdir -p dir` (`dir` absolute, checked by the guard), creating only in directories whose open
 * descriptor `confine` admits. Errors as mkdir's (ENOTDIR for a file in the way, EACCES, …), or
 * `path_outside_workspace`.
 */
export async function makeDirectories(dir: string, confine: Confine): Promise<void> {
  // The deepest existing ancestor (symlinks followed, as the guard followed them) and the names below.
  const missing: string[] = [];
  let base = dir;
  for (;;) {
    const found = await stat(base).then(
      (s) => s.isDirectory(),
      (err: unknown) => {
        // Missing, or a file above it: look higher. Anything else (EACCES, …) is mkdir's error too.
        if (errnoOf(err) === 'ENOENT' || errnoOf(err) === 'ENOTDIR') return undefined;
        throw err;
      },
    );
    if (found !== undefined) {
      if (found && missing.length === 0) return;
      break;
    }
    if (dirname(base) === base) break;
    missing.unshift(basename(base));
    base = dirname(base);
  }
  // ENOTDIR when a file is in the way: the caller names it.
  let handle = await open(base, DIRECTORY);
  try {
    if ((await checkedDirectory(handle, base, dir, confine)) === undefined) {
      await mkdir(dir, { recursive: true });
      return;
    }
    let at = base;
    for (const name of missing) {
      at = join(at, name);
      const procPath = `/proc/self/fd/${handle.fd}/${name}`;
      const created = await mkdir(procPath).then(
        () => true,
        (err: unknown) => {
          if (errnoOf(err) === 'EEXIST') return false; // made meanwhile: checked below like the rest
          throw named(err, procPath, at);
        },
      );
      let next: FileHandle;
      try {
        next = await open(procPath, DIRECTORY);
      } catch (err) {
        throw named(err, procPath, at);
      }
      try {
        // The level above is checked again: moved out meanwhile, the level made in it is taken back.
        await checkedDirectory(handle, dirname(at), dir, confine);
        await checkedDirectory(next, at, dir, confine);
      } catch (err) {
        await next.close().catch(() => undefined);
        if (created) await rmdir(procPath).catch(() => undefined);
        throw err;
      }
      await handle.close().catch(() => undefined);
      handle = next;
    }
  } finally {
    await handle.close().catch(() => undefined);
  }
}
