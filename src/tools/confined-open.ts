/**
 * Opening a file that the path guard has approved, checked again on the file actually opened.
 *
 * The guard resolves a path and the backend opens it a moment later; a symlink swapped in between
 * (by another process) would lead the open outside the workspace. Node has no openat2
 * (RESOLVE_BENEATH), so the descriptor is checked after the open: on Linux /proc/self/fd names the
 * file it really refers to. Elsewhere (no /proc) the check is skipped and the race stays open.
 *
 * Opens use O_NONBLOCK and the descriptor must be a regular file: a FIFO swapped in after the
 * tool's stat would otherwise block the open until a peer appears.
 */
import { constants } from 'node:fs';
import { open, readlink, unlink, type FileHandle } from 'node:fs/promises';
import { TroupeError } from '../core/errors.js';
import { shownName } from './path-guard.js';
import { errnoOf, notRegularFile } from './tool.js';

/** Whether a real path may be opened (the guard's `containsReal`). */
export type Confine = (realPath: string) => boolean;

const READ = constants.O_RDONLY | constants.O_NONBLOCK;
const WRITE = constants.O_WRONLY | constants.O_NONBLOCK;

const DELETED = ' (deleted)';

/** The path the open descriptor refers to, or undefined where the system does not say. */
export async function openedPath(handle: FileHandle): Promise<string | undefined> {
  const path = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
  if (!path?.endsWith(DELETED)) return path;
  // An unlinked file reads "<path> (deleted)"; where it was is what counts. Only an unlinked one: a
  // file may be named so, and until 2026-12-07 "<root> (deleted)", a file beside the workspace,
  // passed as the workspace root itself.
  if ((await handle.stat()).nlink > 0) return path;
  return path.slice(0, -DELETED.length);
}

/**
 * Checks an open handle; closes it (and removes the file when this open created it) and throws
 * `path_outside_workspace` or a not-regular-file error when it must not be used. `real`: where the
 * handle is, as read to confine it (undefined when not confined, or where the system does not say).
 */
async function admit(handle: FileHandle, absPath: string, confine: Confine | undefined, created: boolean): Promise<{ handle: FileHandle; real: string | undefined }> {
  try {
    const real = confine ? await openedPath(handle) : undefined;
    if (real !== undefined && !confine!(real)) {
      if (created) await unlink(real).catch(() => undefined);
      throw new TroupeError(
        'path_outside_workspace',
        `Refused: ${shownName(absPath)} led to ${shownName(real)} when it was opened, outside the workspace (a symlink on the way changed after the path was checked).`,
        { path: absPath },
      );
    }
    if (!(await handle.stat()).isFile()) throw notRegularFile(absPath);
    return { handle, real };
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw err;
  }
}

/** `absPath` may be bytes: a path with a name that is not UTF-8 opens only so. */
export async function openForRead(absPath: string | Buffer, confine: Confine | undefined): Promise<FileHandle> {
  return (await admit(await open(absPath, READ), absPath.toString(), confine, false)).handle;
}

/**
 * The bytes of the file at `absPath`, opened as {@link openForRead} opens it, or undefined when it
 * has more than `maxBytes` ({@link readAtMost}). There is no unbounded variant: until 2026-12-07
 * edit_file's look at the bytes on disk read the whole file, whatever its size (a multi-GiB file
 * swapped in was read into memory, or, past 2 GiB, its read failed and the look was skipped).
 */
export async function readConfinedAtMost(absPath: string | Buffer, maxBytes: number, confine: Confine | undefined, signal?: AbortSignal): Promise<Buffer | undefined> {
  const handle = await openForRead(absPath, confine);
  try {
    return await readAtMost(handle, maxBytes, signal);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * The bytes of an open file, or undefined when it has more than `maxBytes`: at most `maxBytes` + 1
 * bytes are read, so the bound holds for the file actually opened, however large the path looked
 * when it was checked, and also when the file grows while it is read.
 */
export async function readAtMost(handle: FileHandle, maxBytes: number, signal?: AbortSignal): Promise<Buffer | undefined> {
  const size = (await handle.stat()).size;
  if (size > maxBytes) return undefined;
  // The size is where to start, not a bound: the file may grow while it is read.
  let buf = Buffer.allocUnsafe(size + 1);
  let filled = 0;
  for (;;) {
    signal?.throwIfAborted();
    if (filled === buf.length) {
      if (filled > maxBytes) return undefined;
      const bigger = Buffer.allocUnsafe(Math.min(buf.length * 2, maxBytes + 1));
      buf.copy(bigger, 0, 0, filled);
      buf = bigger;
    }
    const { bytesRead } = await handle.read(buf, filled, buf.length - filled, filled);
    if (bytesRead === 0) return buf.subarray(0, filled);
    filled += bytesRead;
  }
}

/** A file opened for writing: whether this open created it, and where it really is (undefined without /proc). */
export interface OpenedForWrite {
  handle: FileHandle;
  created: boolean;
  real: string | undefined;
}

async function admitWrite(absPath: string, flags: number, confine: Confine | undefined, created: boolean): Promise<OpenedForWrite> {
  const { handle, real } = await admit(await open(absPath, flags, 0o666), absPath, confine, created);
  // Read once: when confined, admit read it already.
  return { handle, created, real: confine ? real : await openedPath(handle) };
}

/**
 * Opens for writing without truncating (the caller truncates once the handle is admitted), creating
 * the file if missing. A missing file is created with O_EXCL, which does not follow a final
 * symlink; only a dangling symlink (whose target writing creates, as the guard allows) is then
 * opened following it.
 */
export async function openForWrite(absPath: string, confine: Confine | undefined): Promise<OpenedForWrite> {
  try {
    return await admitWrite(absPath, WRITE, confine, false);
  } catch (err) {
    if (errnoOf(err) !== 'ENOENT') throw err;
  }
  try {
    return await admitWrite(absPath, WRITE | constants.O_CREAT | constants.O_EXCL, confine, true);
  } catch (err) {
    if (errnoOf(err) !== 'EEXIST') throw err;
  }
  // Not known to be created by this open (the link may lead to a file that exists by now): a refused
  // one is left where it is, never removed. At worst an empty file stays outside; nothing is lost.
  return admitWrite(absPath, WRITE | constants.O_CREAT, confine, false);
}

/**
 * Creates a new file at `absPath` (O_EXCL: never an existing file, never through a final symlink),
 * checked like every open; a refused one is removed.
 */
export async function createExclusive(absPath: string, mode: number, confine: Confine | undefined): Promise<FileHandle> {
  return (await admit(await open(absPath, WRITE | constants.O_CREAT | constants.O_EXCL, mode), absPath, confine, true)).handle;
}
