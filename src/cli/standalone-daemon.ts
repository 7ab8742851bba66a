/**
 * `--standalone`: a private daemon for one command. Its own child process, an ephemeral port on
 * 127.0.0.1, a fresh state directory (so a one-off token); stopped and removed when the command
 * ends, even on a hasty exit, and by a reaper process when the command is killed hard (kill -9).
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliError, shuttingDown } from './cli-io.js';
import type { DaemonTarget } from './daemon.client.js';
import { daemonLogPath } from './daemon-home.js';
import { TROUPE_BIN, waitForDaemon } from './daemon-process.js';

export interface StandaloneDaemon {
  pid: number;
  home: string;
  target: DaemonTarget;
  stop(): Promise<void>;
}

/**
 * The last resort, started beside the daemon: it waits for the command's process to end, in any way
 * (its stdin is a pipe from there, which the kernel closes even after a kill -9). Unless the command
 * said it stopped the daemon itself (`stopped` on that pipe), it then sends daemon pid argv[1]
 * SIGTERM (its clean stop takes its session processes with it), SIGKILL after 20 s, and removes
 * directory argv[2].
 */
const REAPER = `
const [pid, home] = [Number(process.argv[1]), process.argv[2]];
const alive = () => { try { process.kill(pid, 0); return true; } catch { return false; } };
const rm = () => require('node:fs').rmSync(home, { recursive: true, force: true });
let said = '';
let done = false;
const reap = () => {
  if (done) return;
  done = true;
  if (said.includes('stopped')) return rm();
  if (alive()) process.kill(pid, 'SIGTERM');
  const started = Date.now();
  const tick = () => {
    if (alive() && Date.now() - started < 20000) return setTimeout(tick, 50);
    if (alive()) process.kill(pid, 'SIGKILL');
    setTimeout(rm, 200);
  };
  tick();
};
process.stdin.setEncoding('utf8').on('data', (d) => (said += d)).once('end', reap).once('error', reap);
`;

const running = new Set<() => Promise<void>>();

/** Stops every standalone daemon of this process (before an early exit, e.g. a closed stdout). */
export async function stopStandaloneDaemons(): Promise<void> {
  await Promise.all([...running].map((stop) => stop()));
}

/** Starts the private daemon and waits until it serves. */
export async function startStandalone(env: NodeJS.ProcessEnv): Promise<StandaloneDaemon> {
  let home: string;
  try {
    home = mkdtempSync(join(tmpdir(), 'troupe-standalone-'));
  } catch (err) {
    // Until 2026-12-06 Node's words ("ENOENT: no such file or directory, mkdtemp '…'"), with no code.
    throw new CliError('daemon_start_failed', `cannot make the standalone daemon's state directory in ${tmpdir()} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): set TMPDIR to a directory you can write`);
  }
  const log = openSync(daemonLogPath(home), 'a', 0o600);
  // Detached: in a process group of its own, so that the terminal's Ctrl-C (sent to the whole
  // foreground group) reaches only the command, which cancels the turn and then stops the daemon.
  // In the command's group the daemon got it too, stopped at once, and the command lost it.
  const child = spawn(process.execPath, [TROUPE_BIN, 'serve', '--host', '127.0.0.1', '--port', '0', '--pool', '1'], {
    detached: true,
    stdio: ['ignore', log, log],
    env: { ...env, TROUPE_HOME: home },
  });
  closeSync(log);
  // Detached too, so that a kill of the command's whole group (kill -9 -PGID) does not take it along.
  const reaper = spawn(process.execPath, ['-e', REAPER, String(child.pid), home], { detached: true, stdio: ['pipe', 'ignore', 'ignore'], cwd: tmpdir() });
  reaper.once('error', () => undefined);
  reaper.stdin!.on('error', () => undefined); // it died: nothing is left to tell
  reaper.unref();
  (reaper.stdin as unknown as { unref?(): void }).unref?.();
  let exited = false;
  const gone = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
  child.once('error', () => (exited = true));
  // If the process leaves without stop() (an uncaught error, process.exit elsewhere), nothing can be
  // awaited any more: the daemon is told to stop, and the reaper, whose pipe from here closes now,
  // waits for that clean stop (its session processes with it) and then removes the directory.
  const onExit = () => {
    if (exited) return void rmSync(home, { recursive: true, force: true });
    child.kill('SIGTERM');
  };
  process.once('exit', onExit);
  // Killed by a signal, the process would skip 'exit': stop the daemon, then die the same way. The
  // command, which sees its daemon go, says nothing: it was told to stop, nothing failed.
  const onSignal = (signal: NodeJS.Signals) => {
    shuttingDown.value = true;
    void stop().finally(() => process.kill(process.pid, signal));
  };
  const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGHUP'];
  for (const s of signals) process.once(s, onSignal);

  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      if (!exited) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await gone;
        clearTimeout(timer);
      }
      process.removeListener('exit', onExit);
      for (const s of signals) process.removeListener(s, onSignal);
      rmSync(home, { recursive: true, force: true });
      // The daemon is gone and reaped: the reaper must not signal its pid, which is free for reuse.
      reaper.stdin!.end('stopped\n');
    })());

  running.add(stop);
  void gone.then(() => running.delete(stop));
  try {
    const { target } = await waitForDaemon(home, () => exited, 15_000, () => tail(daemonLogPath(home)));
    return { pid: child.pid!, home, target: { ...target, standalone: true }, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function tail(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim().split('\n').slice(-1)[0] ?? 'no output';
  } catch {
    return 'no output';
  }
}
