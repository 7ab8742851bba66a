/** Directory paths as the kernel resolves them: the roots of a session's workspace (spec/tools.md §3). */
import { realpathSync } from 'node:fs';
import { resolve, sep } from 'node:path';

/**
 * An absolute directory path as the kernel names it: a `..` climbs from where the symlinks before it
 * lead (`/a/link/..`, `link -> /b/c`, is `/b`), as for a process that opens or `cd`s there, not
 * from the text before it (`path.resolve` makes it `/a`). So the part up to the last `..` is resolved
 * by the system's realpath; the rest is normalised as text and keeps its names (a symlink named
 * after it stays so, for display). A path with no `..` segment is `resolve(dir)`, as before. One
 * whose part up to the last `..` does not resolve (it does not exist) is taken as text, naming no
 * directory the kernel would reach either. Until 2026-12-07 every root was read as text: an
 * additional directory `/a/link/..` let the tools into `/a` and kept them out of `/b`.
 */
export function kernelDirectory(dir: string): string {
  const parts = dir.split(sep);
  const last = parts.lastIndexOf('..');
  if (last === -1) return resolve(dir);
  let head: string;
  try {
    head = realpathSync.native(parts.slice(0, last + 1).join(sep) || sep);
  } catch {
    return resolve(dir);
  }
  return resolve(head, ...parts.slice(last + 1));
}
