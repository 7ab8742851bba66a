/**
 * The modes of troupe's state (spec/event-log.md §0, Modes): its directories 0700 and its files 0600.
 * Session logs hold prompts, the contents of files read and the output of commands; the chat history
 * holds prompts; the token drives the sessions. What troupe makes is made so; what it finds open to
 * others (a directory made by `mkdir` under umask 022, systemd's `StateDirectory=`, which is 0755, a
 * copy or a restore under another umask) is made private when it opens it, and said: until
 * 2026-12-07 it was kept as it was.
 */
import { chmodSync, lstatSync, readdirSync, statSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Logger } from '../core/ports.js';
import { chatHistoryPath, daemonLockPath, daemonLogPath, daemonStatePath } from './daemon-files.js';

/** The permission bits of the group and of others. */
const OTHERS = 0o077;

/** `0755`, as `ls` and `chmod` write it. */
const octalMode = (mode: number) => (mode & 0o7777).toString(8).padStart(4, '0');

/** Whether a file or directory's mode lets anyone but its owner in. */
const openToOthers = (mode: number) => (mode & OTHERS) !== 0;

/**
 * Takes the group's and others' bits off `path` (the owner's stay: a file 0644 becomes 0600, a
 * directory 0755 0700). Its mode before when it changed; undefined when it was private already, or
 * is not there. A link is left alone (what it points to is not troupe's), unless `follow`: a
 * directory troupe names (the home, its sessions directory) may be a link to where it is kept. Throws
 * what chmod throws (EPERM: another owner's).
 */
function makePrivate(path: string, { follow = false }: { follow?: boolean } = {}): number | undefined {
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

/**
 * The home made 0700 when others may use it, and troupe's files in it that others may read made 0600
 * (the token: ensureToken; the sessions directory: the session index, as it opens it), each said
 * (spec/event-log.md §0, Modes), as `troupe serve` starts, and an editor's `troupe acp` (until
 * 2026-12-07 only its sessions directory was). Until 2026-12-07 a home of 0755 (made by `mkdir`, or
 * systemd's `StateDirectory=`) was kept so, and so were a `daemon.log` or `chat_history` (prompts)
 * open to others. A home shared by design is left as it is, and said: one with the sticky bit (/tmp), one of
 * another owner, or the user's home directory; troupe's own files in it are made private all the same.
 */
export function privateHome(home: string, logger: Logger): void {
  let st: Stats;
  try {
    st = statSync(home);
  } catch (err) {
    // Not made yet (an editor's first `troupe acp`): troupe makes it 0700 when it first writes there.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if (openToOthers(st.mode)) {
    const shared = (st.mode & 0o1000) !== 0 ? 'shared (sticky bit)' : st.uid !== process.getuid?.() ? 'of another owner' : resolve(home) === resolve(homedir()) ? 'your home directory' : undefined;
    if (shared) {
      logger.warn(`${home} (TROUPE_HOME) is open to others (mode ${octalMode(st.mode)}) and left as it is, being ${shared}: troupe's files in it are private, but anyone who can write in it can replace them (the token, daemon.json); set TROUPE_HOME to a directory of troupe's own`);
    } else {
      try {
        makePrivate(home, { follow: true });
        logger.warn(`${home} (TROUPE_HOME) holds the sessions, their logs and the token, and was open to others (mode ${octalMode(st.mode)}): made 0700`);
      } catch (err) {
        logger.warn(`${home} (TROUPE_HOME) is open to others (mode ${octalMode(st.mode)}) and cannot be made 0700: make it so (chmod 700)`, { error: String(err) });
      }
    }
  }
  for (const path of [daemonLogPath(home), chatHistoryPath(home), daemonStatePath(home), daemonLockPath(home)]) {
    try {
      const before = makePrivate(path);
      if (before !== undefined) logger.warn(`${path} was open to others (mode ${octalMode(before)}): made ${octalMode(before & 0o700)}`);
    } catch (err) {
      logger.warn(`${path} is open to others and cannot be made private`, { error: String(err) });
    }
  }
}
