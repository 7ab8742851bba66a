/**
 * Which version of a file is on disk, without reading it: files that are only ever replaced whole
 * (an atomic write gives a new inode and new times) have the same identity until someone writes them.
 */
import { stat } from 'node:fs/promises';

export interface FileIdentity {
  ino: number;
  size: number;
  mtimeNs: bigint;
  ctimeNs: bigint;
}

/** The identity of the file at `path`, or `undefined` if there is none. */
export async function fileIdentity(path: string): Promise<FileIdentity | undefined> {
  try {
    const s = await stat(path, { bigint: true });
    return { ino: Number(s.ino), size: Number(s.size), mtimeNs: s.mtimeNs, ctimeNs: s.ctimeNs };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Whether both are known and the same: nobody wrote the file between the two. */
export function sameFile(a: FileIdentity | undefined, b: FileIdentity | undefined): boolean {
  return !!a && !!b && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}
