/**
 * Atomic file replacement: write a temp file in the same directory, fsync it, rename it over the
 * target, fsync the directory. A crash leaves either the old file or the new one, never a mix.
 */
import { randomBytes } from 'node:crypto';
import { writeSync } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
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
 * parts, written in order with one `writev`: a big file made of many small pieces (the session
 * index) is then copied by the kernel, not joined into one buffer on the caller's event loop.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array | readonly Uint8Array[], mode = 0o600): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const fh = await open(tmp, 'wx', mode);
  try {
    try {
      if (Array.isArray(data)) await writeAllParts(fh, data);
      else await fh.writeFile(data as string | Uint8Array);
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

/** Writes every part, in order, from the start of a new file: a write may take only some of them. */
export async function writeAllParts(fh: FileHandle, parts: readonly Uint8Array[]): Promise<void> {
  let rest = parts.filter((p) => p.length > 0);
  let position = 0;
  while (rest.length > 0) {
    const { bytesWritten } = await fh.writev(rest, position);
    if (bytesWritten === 0) throw new Error(`writev wrote nothing at offset ${position}`);
    position += bytesWritten;
    // Drop what was written: whole parts, then the written head of the next one.
    let n = bytesWritten;
    let i = 0;
    while (i < rest.length && n >= rest[i]!.length) n -= rest[i++]!.length;
    rest = rest.slice(i);
    if (n > 0) rest[0] = rest[0]!.subarray(n);
  }
}
