/**
 * `--standalone`: a private daemon for one command. Its own child process, an ephemeral port on
 * 127.0.0.1, a fresh state directory (so a one-off token); stopped and removed when the command
 * ends, even on a hasty exit.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shuttingDown } from './cli-io.js';
import type { DaemonTarget } from './daemon.client.js';
import { daemonLogPath } from './daemon-home.js';
import { TROUPE_BIN, waitForDaemon } from './daemon-process.js';

export interface StandaloneDaemon {
  pid: number;
  home: string;
  target: DaemonTarget;
  stop(): Promise<void>;
}

/** Waits for pid argv[1] to end (SIGKILL after 20 s), then removes directory argv[2]. */
const REAPER = `
const [pid, home] = [Number(process.argv[1]), process.argv[2]];
const alive = () => { try { process.kill(pid, 0); return true; } catch { return false; } };
const started = Date.now();
const tick = () => {
  if (alive() && Date.now() - started < 20000) return setTimeout(tick, 50);
  if (alive()) process.kill(pid, 'SIGKILL');
  setTimeout(() => require('node:fs').rmSync(home, { recursive: true, force: true }), 200);
};
tick();
`;

const running = new Set<() => Promise<void>>();

/** Stops every standalone daemon of this process (before an early exit, e.g. a closed stdout). */
export async function stopStandaloneDaemons(): Promise<void> {
  await Promise.all([...running].map((stop) => stop()));
}

/** Starts the private daemon and waits until it serves. */
export async function startStandalone(env: NodeJS.ProcessEnv): Promise<StandaloneDaemon> {
  const home = mkdtempSync(join(tmpdir(), 'troupe-standalone-'));
  const log = openSync(daemonLogPath(home), 'a', 0o600);
  const child = spawn(process.execPath, [TROUPE_BIN, 'serve', '--host', '127.0.0.1', '--port', '0', '--pool', '1'], {
    stdio: ['ignore', log, log],
    env: { ...env, TROUPE_HOME: home },
  });
  closeSync(log);
  let exited = false;
  const gone = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
  child.once('error', () => (exited = true));
  // Last resort if the process leaves without stop() (an uncaught error, process.exit elsewhere):
  // nothing can be awaited any more, so a detached reaper waits for the daemon to finish its own
  // clean stop (its session processes with it) and then removes the directory.
  const onExit = () => {
    if (exited) return void rmSync(home, { recursive: true, force: true });
    child.kill('SIGTERM');
    spawn(process.execPath, ['-e', REAPER, String(child.pid), home], { detached: true, stdio: 'ignore' }).unref();
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
    })());

  running.add(stop);
  void gone.then(() => running.delete(stop));
  try {
    const target = await waitForDaemon(home, () => exited, 15_000, () => tail(daemonLogPath(home)));
    return { pid: child.pid!, home, target, stop };
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
