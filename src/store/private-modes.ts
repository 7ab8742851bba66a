/**
 * The modes of troupe's state (spec/event-log.md §0, Modes): its directories 0700 and its files 0600.
 * Session logs hold prompts, the contents of files read and the output of commands; the chat history
 * holds prompts; the token drives the sessions. What troupe makes is made so; what it finds open to
 * others (a directory made by `mkdir` under umask 022, systemd's `StateDirectory=`, which is 0755, a
 * copy or a restore under another umask) is made private when it opens it, and said: until
 * 2026-12-07 it was kept as it was.
 */
import { chmodSync, lstatSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../core/ports.js';

/** The permission bits of the group and of others. */
const OTHERS = 0o077;

/** `0755`, as `ls` and `chmod` write it. */
export const octalMode = (mode: number) => (mode & 0o7777).toString(8).padStart(4, '0');

/** Whether a file or directory's mode lets anyone but its owner in. */
export const openToOthers = (mode: number) => (mode & OTHERS) !== 0;

/**
 * Takes the group's and others' bits off `path` (the owner's stay: a file 0644 becomes 0600, a
 * directory 0755 0700). Its mode before when it changed; undefined when it was private already, or
 * is not there. A link is left alone (what it points to is not troupe's), unless `follow`: a
 * directory troupe names (the home, its sessions directory) may be a link to where it is kept. Throws
 * what chmod throws (EPERM: another owner's).
 */
export function makePrivate(path: string, { follow = false }: { follow?: boolean } = {}): number | undefined {
  let mode: number;
  try {
    const st = follow ? statSync(path) : lstatSync(path);
    if (st.isSymbolicLink()) return undefined;
    mode = st.mode;
  } catch {
    return undefined;
  }
  if (!openToOthers(mode)) return undefined;
  chmodSync(path, mode & 0o700);
  return mode;
}

/**
 * The sessions directory made 0700 when others may use it, and then every file in it that others may
 * read made private too (they were readable until now, and would be again should the directory be
 * opened). A directory that is private already is not listed: one stat at each open. A link to the
 * directory is followed; links in it are not.
 */
export function privateSessionsDir(dir: string, logger: Logger): void {
  let before: number | undefined;
  try {
    before = makePrivate(dir, { follow: true });
  } catch (err) {
    logger.warn(`${dir} holds the session logs (prompts, file contents, command output) and is open to others, and cannot be made 0700: make it so (chmod 700)`, { error: String(err) });
    return;
  }
  if (before === undefined) return;
  let files = 0;
  for (const name of readdirSync(dir)) {
    try {
      if (makePrivate(join(dir, name)) !== undefined) files++;
    } catch (err) {
      logger.warn(`${join(dir, name)} is open to others and cannot be made private`, { error: String(err) });
    }
  }
  logger.warn(`${dir} holds the session logs (prompts, file contents, command output) and was open to others (mode ${octalMode(before)}): made 0700${files > 0 ? `, and ${files} ${files === 1 ? 'file' : 'files'} in it that others could read made private (0600)` : ''}`);
}
