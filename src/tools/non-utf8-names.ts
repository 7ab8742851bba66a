/**
 * File names that are not UTF-8 (Linux allows any bytes but "/" and NUL in a name). Read as UTF-8,
 * each bad byte becomes U+FFFD, and that name opens nothing: list_dir marks such a name and says
 * how a shell can name it, and a tool given the U+FFFD reading is told why it finds nothing, rather
 * than a plain "not found" for a file list_dir has just shown.
 */
import { isUtf8 } from 'node:buffer';
import { existsSync } from 'node:fs';
import { basename, dirname, sep } from 'node:path';
import { TroupeError } from '../core/errors.js';
import { dirEntries } from './first-entries.js';
import { shownName, type PathGuard } from './path-guard.js';

/** A POSIX sh word for these bytes (run_command is `sh -c`, which has no `$'…'`): printf and octal escapes. */
export function shellWordFor(raw: Buffer): string {
  let format = '';
  for (const byte of raw) {
    const c = String.fromCharCode(byte);
    format += byte >= 0x20 && byte < 0x7f && !`'\\%`.includes(c) ? c : `\\${byte.toString(8).padStart(3, '0')}`;
  }
  return `"$(printf '${format}')"`;
}

/** list_dir's note after such a name (glob's and grep's after such a path). */
export const notUtf8Note = (raw: Buffer): string => `  [name not UTF-8: the file tools cannot open it; in run_command it is ${shellWordFor(raw)}]`;

/**
 * A path glob or grep found, as the guard shows it, followed by the note when a name in it is not
 * UTF-8 (`raw`: its bytes, absolute): the word is relative to the cwd, as the shown path is, and
 * run_command runs there by default.
 */
export function shownFoundPath(guard: PathGuard, file: { path: string; raw?: Buffer }): string {
  const shown = guard.display(file.path);
  if (!file.raw) return shown;
  const cwd = guard.base;
  const prefix = Buffer.from(cwd.endsWith(sep) ? cwd : cwd + sep);
  const inCwd = file.raw.subarray(0, prefix.length).equals(prefix);
  return shown + notUtf8Note(inCwd ? file.raw.subarray(prefix.length) : file.raw);
}

/**
 * The error for the missing path `abs` when one of its names that is missing is the U+FFFD reading
 * of a name that is there but not UTF-8; undefined when none is (then it is plainly not found).
 */
export async function notUtf8NameError(abs: string, shown: string): Promise<TroupeError | undefined> {
  // Only the missing part of the path: what exists was found by its name.
  for (let path = abs; path !== dirname(path) && !existsSync(path); path = dirname(path)) {
    const name = basename(path);
    if (!name.includes('\uFFFD')) continue;
    const raw = await notUtf8Named(dirname(path), name);
    if (raw) {
      const message = `${shown} cannot be opened: the name ${shownName(name)} there is not UTF-8 (each U+FFFD stands for a byte that is not), and the file tools only take UTF-8 names. In run_command it is ${shellWordFor(raw)}.`;
      return new TroupeError('tool_failed', message, { path: shown, errno: 'ENOENT', reason: 'name_not_utf8' });
    }
  }
  return undefined;
}

/**
 * The name in `dir` that is not UTF-8 and reads as `name`, if there is one. The directory is
 * streamed, up to that name: until 2026-12-07 it was read whole, and synchronously, so a U+FFFD in a
 * path into a directory of millions of files held them all in memory (some 190 bytes a name) and
 * stopped the agent while they were read.
 */
async function notUtf8Named(dir: string, name: string): Promise<Buffer | undefined> {
  try {
    for await (const entry of await dirEntries(dir)) {
      if (!isUtf8(entry.name) && entry.name.toString('utf8') === name) return entry.name;
    }
  } catch {
    // unreadable: no name to offer
  }
  return undefined;
}
