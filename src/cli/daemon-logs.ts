/**
 * `troupe daemon logs [-f] [-n N]`: the last lines of `$TROUPE_HOME/daemon.log`, then, with
 * `--follow`, what the daemon writes to it until Ctrl-C, as `tail -F` follows a file: across its
 * truncation, its removal and a new file under its name (a rotation).
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync, watch } from 'node:fs';
import { CliError, EXIT, leaveQuietly, type CliIo } from './cli-io.js';
import { daemonLogPath } from './daemon-home.js';
import { logReadFailed } from './file-read-failed.js';
import { onStdoutReaderGone } from './stdout-reader.js';

/** The most read from the file at once while following (a burst is written in pieces of this). */
const CHUNK = 1024 * 1024;

export async function daemonLogs(io: CliIo, home: string, follow: boolean, lines: number): Promise<number> {
  const path = daemonLogPath(home);
  if (!existsSync(path)) throw new CliError('daemon_unreachable', `no daemon log at ${path} (the daemon was never started with 'troupe daemon start')`);
  let all: string;
  let ino: number;
  try {
    ino = statSync(path).ino;
    all = readFileSync(path, 'utf8');
  } catch (err) {
    // Until 2026-12-06 Node's words ("EACCES: permission denied, open '…'"), with no code.
    throw logReadFailed(path, err) ?? err;
  }
  const tail = all.split('\n');
  if (tail.at(-1) === '') tail.pop();
  io.stdout.write(tail.slice(tail.length - Math.min(lines, tail.length)).map((l) => `${l}\n`).join(''));
  if (!follow) return EXIT.ok;
  let offset = Buffer.byteLength(all);
  await new Promise<void>((resolve, reject) => {
    const stop = () => {
      watcher?.close();
      clearInterval(poll);
      process.removeListener('SIGINT', onInterrupt);
      stopWatchingReader();
    };
    const onInterrupt = () => (stop(), resolve());
    // Read synchronously, from one offset: a change event and the poll never read the same bytes
    // twice or out of order. Until 2026-12-06 a log removed while followed (a rotation) threw from
    // here: a stack trace, exit 1.
    const pump = () => {
      try {
        const st = statSync(path);
        if (st.ino !== ino || st.size < offset) [ino, offset] = [st.ino, 0]; // another file, or truncated: from its start
        if (st.size === offset) return;
        const fd = openSync(path, 'r');
        try {
          const buf = Buffer.alloc(Math.min(st.size - offset, CHUNK));
          const n = readSync(fd, buf, 0, buf.length, offset);
          offset += n;
          io.stdout.write(buf.subarray(0, n));
        } finally {
          closeSync(fd);
        }
      } catch (err) {
        // Gone (removed, or between a rotation's rename and its new file): wait for the next one.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
        stop();
        reject(logReadFailed(path, err) ?? err);
      }
    };
    // The watch sees the first file only (it follows an inode); the poll finds the ones after it.
    const watcher = (() => {
      try {
        return watch(path, pump).on('error', () => undefined);
      } catch {
        return undefined;
      }
    })();
    const poll = setInterval(pump, 500);
    process.once('SIGINT', onInterrupt);
    // A quiet daemon writes nothing for hours: `daemon logs -f | grep -m1 …` ends once grep has, not
    // at a next line that may never come (until 2026-12-07), as `tail -f` does.
    const stopWatchingReader = onStdoutReaderGone(io.stdout, leaveQuietly);
  });
  return EXIT.ok;
}
