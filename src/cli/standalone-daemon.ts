/**
 * `--standalone`: a private daemon for one command. Its own child process, an ephemeral port on
 * 127.0.0.1, a fresh state directory (so a one-off token); stopped and removed when the command
 * ends, even on a hasty exit.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DaemonTarget } from './daemon.client.js';
import { daemonLogPath } from './daemon-home.js';
import { TROUPE_BIN, waitForDaemon } from './daemon-process.js';

export interface StandaloneDaemon {
  pid: number;
  home: string;
  target: DaemonTarget;
  stop(): Promise<void>;
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
  // Last resort if the process leaves without stop() (an uncaught error, process.exit elsewhere).
  const onExit = () => {
    if (!exited) child.kill('SIGKILL');
    rmSync(home, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  // Killed by a signal, the process would skip 'exit': stop the daemon, then die the same way.
  const onSignal = (signal: NodeJS.Signals) => {
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
