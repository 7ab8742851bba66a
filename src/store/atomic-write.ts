/**
 * Atomic file replacement: write a temp file in the same directory, fsync it, rename it over the
 * target, fsync the directory. A crash leaves either the old file or the new one, never a mix.
 */
import { randomBytes } from 'node:crypto';
import { writeSync } from 'node:fs';
import { open, rename, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Writes all of `data` at `position`: a write may take only part of it (a nearly full disk, a
 * file-size limit), and the next call then says why.
 */
export function writeAllSync(fd: number, data: Uint8Array, position: number): void {
  for (let done = 0; done < data.length; ) done += writeSync(fd, data, done, data.length - done, position + done);
}

export async function fsyncDirectory(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Replaces `path` with `data` atomically and durably (mode 0600 by default). `data` may be a list of
 * parts, written in order (Node writes each in turn, to the end): a big file made of many pieces
 * (the session index) is then never joined into one buffer on the caller's event loop.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array | readonly Uint8Array[], mode = 0o600): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const fh = await open(tmp, 'wx', mode);
  try {
    try {
      await writeFile(fh, data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await fsyncDirectory(dir);
}

