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
 * Synchronous, for the process locks' callers: a few small calls without an fsync (tens of µs), where
 * the index's lock, taken at most every 250 ms in a daemon, would gain nothing from the thread pool.
 * Where the file system has no hard links, the exclusive open and a write are used instead.
 */
import { closeSync, linkSync, openSync, rmSync } from 'node:fs';
import { writeAllSync } from './atomic-write.js';

/** Codes of a file system that cannot hard-link (not of a name that exists). */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

let made = 0;
/** A name of this call's own next to `path`: one process may make several files at once. */
const tempNameFor = (path: string): string => `${path}.${process.pid}-${made++}.tmp`;

/**
 * Writes `content` to `path` (mode `mode`), opened with `flags` (`wx`: a new file), removing it if
 * the write fails (a full disk, say: an empty file is what this module is here to never leave). A
 * temp file is opened `w`: one left by a killed process whose pid this one now has is only in the way.
 */
function openAndWrite(path: string, content: string, mode: number, flags: 'w' | 'wx'): void {
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

/** Makes `path` holding `content` (mode `mode`); throws EEXIST if it exists. */
export function createExclusive(path: string, content: string, mode = 0o600): void {
  const temp = tempNameFor(path);
  openAndWrite(temp, content, mode, 'w');
  try {
    linkSync(temp, path);
  } catch (err) {
    if (!NO_LINKS.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
    openAndWrite(path, content, mode, 'wx');
  } finally {
    rmSync(temp, { force: true });
  }
}
