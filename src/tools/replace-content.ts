/**
 * Writing a file's new content so that a write that fails leaves the old content, never a cut file.
 *
 * Until 2026-12-06 the local backend truncated the file and then wrote: a write that failed midway
 * (disk full, quota, a file-size limit: ENOSPC, EDQUOT, EFBIG) left the file empty or holding the
 * start of the new text, and everything after the edit was gone. Now:
 *
 * - A file with one link is replaced whole: the new content goes to a temporary file beside it
 *   (created O_EXCL and checked like every open, given the old file's owner, group and mode, and
 *   synced), which is then renamed over it. The file is the old one or the new one at every moment,
 *   even if the agent is killed. What a rename does not keep: the inode (and with it extended
 *   attributes and ACLs).
 * - A file with hard links is replaced the same way, which breaks the link: the name written holds
 *   the new content and every other name keeps the old. Another name of the file may lie outside the
 *   workspace (pnpm's node_modules are hard links into its store in the home directory), and
 *   writing the shared inode in place changed the file there too (until 2026-12-07). Where no
 *   temporary file can be made, or given the owner and group, such a file is refused, unchanged.
 * - A file with one link whose owner or group the temporary file cannot be given, or one in a
 *   directory where no temporary file can be made, is written in place, as before, so that the owner
 *   stays: the part beyond the old length is written first (the only part that needs new disk space;
 *   if it fails, the file is cut back to its old length, unchanged), then the old length is
 *   overwritten and the file cut to the new one.
 * - A new file is written whole under a temporary name beside it (created and checked the same way,
 *   and synced) and then linked into place, which never replaces what appeared there meanwhile: it
 *   is absent or complete at every moment. Until 2026-12-07 it was created empty and then written,
 *   so an agent killed midway left it cut. Where no such file can be made (or the name is a dangling
 *   symlink, whose target the write creates), it is created and written in place, and removed if
 *   its write fails.
 */
import { randomBytes } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { link, lstat, realpath, rename, unlink } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { TroupeError } from '../core/errors.js';
import { createExclusive, openForWrite, type Confine } from './confined-open.js';
import { shownName } from './path-guard.js';
import { errnoOf } from './tool.js';

/** Writes all of `data` at `position` (a write may take less than it is given). */
async function writeAll(handle: FileHandle, data: Buffer, position: number): Promise<void> {
  for (let done = 0; done < data.length; ) {
    const { bytesWritten } = await handle.write(data, done, data.length - done, position + done);
    done += bytesWritten;
  }
}

/** In place, the growth first: a failure there leaves the old content (see above). */
async function overwriteInPlace(handle: FileHandle, data: Buffer, oldSize: number): Promise<void> {
  if (data.length > oldSize) {
    try {
      await writeAll(handle, data.subarray(oldSize), oldSize);
    } catch (err) {
      await handle.truncate(oldSize).catch(() => undefined);
      throw err;
    }
  }
  await writeAll(handle, data.subarray(0, Math.min(oldSize, data.length)), 0);
  if (data.length < oldSize) await handle.truncate(data.length);
}

/**
 * Replaces the file at `real` (its real path, checked) by a new one holding `data`, with the old
 * one's owner, group and mode. Undefined when done; otherwise why it could not be, nothing changed.
 */
async function replaceByRename(real: string, data: Buffer, old: Stats, confine: Confine | undefined): Promise<string | undefined> {
  const temp = tempBeside(dirname(real), basename(real));
  let handle: FileHandle;
  try {
    handle = await createExclusive(temp, 0o600, confine);
  } catch (err) {
    if (err instanceof TroupeError) throw err;
    // A directory we may not write in: the file itself may still be writable in place.
    return `no new file can be made in its directory (${errnoOf(err) ?? String(err)})`;
  }
  let renamed = false;
  try {
    const made = await handle.stat();
    if (made.uid !== old.uid || made.gid !== old.gid) {
      const kept = await handle.chown(old.uid, old.gid).then(() => true, () => false);
      if (!kept) return 'a new file cannot be given its owner and group';
    }
    // After chown, which clears set-user-ID and set-group-ID bits.
    await handle.chmod(old.mode & 0o7777);
    await writeAll(handle, data, 0);
    await handle.sync();
    // Renamed over the real path: a symlink on the way stays a symlink.
    await rename(temp, real);
    renamed = true;
    return undefined;
  } finally {
    await handle.close().catch(() => undefined);
    if (!renamed) await unlink(temp).catch(() => undefined);
  }
}

/** A temporary name beside `name` in `dir`. */
const tempBeside = (dir: string, name: string) => join(dir, `.${name}.troupe-${randomBytes(6).toString('hex')}.tmp`);

/**
 * Creates the file at `absPath`, when nothing is there, by linking a complete temporary file into
 * place. False, with nothing created, when something is there (by now) or no temporary file can be
 * made beside it: the caller then opens the path itself.
 */
async function createWhole(absPath: string, data: Buffer, confine: Confine | undefined): Promise<boolean> {
  // Anything at the name, a dangling symlink included, is not created here.
  if (await lstat(absPath).then(() => true, () => false)) return false;
  const name = basename(absPath);
  const dir = await realpath(dirname(absPath)).catch(() => undefined);
  if (dir === undefined) return false;
  const temp = tempBeside(dir, name);
  let handle: FileHandle;
  try {
    // The mode a plain create gives (0o666 less the umask).
    handle = await createExclusive(temp, 0o666, confine);
  } catch (err) {
    if (err instanceof TroupeError) throw err;
    return false; // no room for a name that long, a directory we may not write in: as before
  }
  try {
    try {
      await writeAll(handle, data, 0);
      await handle.sync();
    } finally {
      await handle.close().catch(() => undefined);
    }
    // link does not replace, nor follow a symlink at the new name: EEXIST if anything came meanwhile.
    // That, or a file system without hard links (FAT, some network ones), leaves it to the caller.
    return await link(temp, join(dir, name)).then(
      () => true,
      () => false,
    );
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

/** Creates or replaces the file at `absPath` (already checked by the guard) with `content`. */
export async function replaceContent(absPath: string, content: string, confine: Confine | undefined): Promise<void> {
  const data = Buffer.from(content, 'utf8');
  if (await createWhole(absPath, data, confine)) return;
  const { handle, created, real } = await openForWrite(absPath, confine);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await handle.close();
  };
  try {
    if (created) {
      try {
        await writeAll(handle, data, 0);
      } catch (err) {
        await unlink(real ?? absPath).catch(() => undefined);
        throw err;
      }
      return;
    }
    const old = await handle.stat();
    // Without /proc the real path is asked after the open (the check on the open was skipped too).
    // For a hard-linked file, /proc names it by the name it was opened by, the checked one.
    const at = real ?? (await realpath(absPath));
    await close();
    const why = await replaceByRename(at, data, old, confine);
    if (why === undefined) return;
    // The file may have changed since: the in-place write opens it again, checked again, and its
    // links are counted again (a link made meanwhile counts).
    const again = await openForWrite(absPath, confine);
    try {
      const now = await again.handle.stat();
      if (now.nlink > 1) throw hardLinkedError(absPath, now.nlink, why);
      await overwriteInPlace(again.handle, data, now.size);
    } finally {
      await again.handle.close();
    }
  } finally {
    await close();
  }
}

/**
 * A hard-linked file that cannot be replaced by a new one: writing it in place would change every
 * name of it, and the others may lie outside the workspace, where no tool may change anything.
 */
function hardLinkedError(absPath: string, links: number, why: string): TroupeError {
  const shown = shownName(absPath);
  return new TroupeError(
    'tool_failed',
    `Cannot write ${shown}: it has ${links} hard links (other names of the same file, which may lie outside the workspace), and ${why}, so it cannot be replaced by a new file; writing it in place would change it under every name. Nothing was changed.`,
    { path: shown, links },
  );
}

