/**
 * Creates a file with its content already in it, or fails with EEXIST: a lock file is made so.
 *
 * An exclusive open (`wx`) then a write leaves the file empty in between. Another process reading it
 * then cannot tell whose it is, and a maker killed there left an empty lock that held every other
 * process off until it aged out (10 s: a `session/resume` waited 9.9 s behind the index's lock of an
 * agent killed with -9). Here the content goes into a temp file first, which is then hard-linked to
 * the name: `link` fails if the name exists, and the name never appears without its content. A
 * maker killed before the link leaves only its temp file, named by its pid.
 *
 * Where the file system has no hard links, the exclusive open and a write are used instead.
 */
import { closeSync, linkSync, openSync, rmSync } from 'node:fs';
import { link, open, unlink } from 'node:fs/promises';
import { writeAllSync } from './atomic-write.js';

/** Codes of a file system that cannot hard-link (not of a name that exists). */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

let made = 0;
/** A name of this call's own next to `path`: one process may make several files at once. */
const tempNameFor = (path: string): string => `${path}.${process.pid}-${made++}.tmp`;

/**
 * Writes `content` to `path` (mode `mode`), opened with `flags` (`wx`: a new file), removing it if
 * the write fails. A temp file is opened `w`: one left by a killed process whose pid this one now has
 * is only in the way.
 */
async function openAndWrite(path: string, content: string, mode: number, flags: 'w' | 'wx'): Promise<void> {
  const fh = await open(path, flags, mode);
  try {
    await fh.writeFile(content);
  } catch (err) {
    // A full disk, say: an empty file is what this module is here to never leave.
    await fh.close();
    await unlink(path).catch(() => undefined);
    throw err;
  }
  await fh.close();
}

function openAndWriteSync(path: string, content: string, mode: number, flags: 'w' | 'wx'): void {
  const fd = openSync(path, flags, mode);
  try {
    writeAllSync(fd, Buffer.from(content), 0);
  } catch (err) {
    closeSync(fd);
    rmSync(path, { force: true });
    throw err;
  }
  closeSync(fd);
}

/** Makes `path` holding `content` (mode `mode`); rejects with EEXIST if it exists. */
export async function createExclusive(path: string, content: string, mode = 0o600): Promise<void> {
  const temp = tempNameFor(path);
  await openAndWrite(temp, content, mode, 'w');
  try {
    await link(temp, path);
  } catch (err) {
    if (!NO_LINKS.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
    await openAndWrite(path, content, mode, 'wx');
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

/** {@link createExclusive}, synchronous; throws EEXIST if `path` exists. */
export function createExclusiveSync(path: string, content: string, mode = 0o600): void {
  const temp = tempNameFor(path);
  openAndWriteSync(temp, content, mode, 'w');
  try {
    linkSync(temp, path);
  } catch (err) {
    if (!NO_LINKS.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
    openAndWriteSync(path, content, mode, 'wx');
  } finally {
    rmSync(temp, { force: true });
  }
}
