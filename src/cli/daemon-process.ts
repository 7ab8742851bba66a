/**
 * Starting and stopping a local daemon: `troupe serve --port 0` detached, its output in
 * `$TROUPE_HOME/daemon.log`; ready once its state file names it and `/v1/health` answers. Stopping
 * is SIGTERM, then waiting for the process to exit and the state file to go.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { daemonLockPath, daemonStatePath, makeDirs, unusableHomeMessage } from '../store/index.js';
import { CliError } from './cli-io.js';
import type { DaemonTarget } from './daemon.client.js';
import { daemonLogPath, pidAlive } from './daemon-home.js';
import { procStatFields } from '../core/proc-stat.js';
import { lookAtDaemon, runningDaemon, type RunningDaemon } from './daemon-locate.js';

/** bin/troupe.js, three levels above dist/src/cli. */
export const TROUPE_BIN = fileURLToPath(new URL('../../../bin/troupe.js', import.meta.url));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until the state file names a daemon that answers health. `child` is the process we spawned:
 * if it exits first (say another CLI started a daemon a moment earlier and holds the lock), the
 * winner is used instead once it is ready.
 */
export async function waitForDaemon(home: string, exited: () => boolean, timeoutMs: number, describe: () => string): Promise<RunningDaemon> {
  const deadline = Date.now() + timeoutMs;
  let exitSeenAt: number | undefined;
  while (Date.now() < deadline) {
    const running = await runningDaemon(home);
    if (running) return running;
    if (exited()) {
      exitSeenAt ??= Date.now();
      // Our daemon is gone; give a concurrent winner a moment, then report ours.
      if (Date.now() - exitSeenAt > 2_000) break;
    }
    await sleep(40);
  }
  throw new CliError('daemon_start_failed', `the daemon did not start: ${describe()}`);
}

/**
 * Starts a detached daemon for `home` and waits for it: its target and pid, and whether it is the
 * process started here (not when another start won the home's lock meanwhile). `serveArgs` are
 * options of `troupe serve` (`troupe daemon start --pool 4`), checked already: given after the
 * default `--port 0`, a `--port` among them is the one serve takes (its last).
 */
export async function startDaemon(home: string, env: NodeJS.ProcessEnv, serveArgs: readonly string[] = []): Promise<{ target: DaemonTarget; pid: number; started: boolean }> {
  let log: number;
  let logStart = 0;
  try {
    makeDirs(home, 0o700); // (not mkdirSync recursive: it never returns for a path under /proc)
    log = openSync(daemonLogPath(home), 'a', 0o600);
    logStart = fstatSync(log).size;
  } catch (err) {
    // The daemon could not write its token, lock and logs there either.
    throw new CliError('daemon_start_failed', unusableHomeMessage(home, err));
  }
  let exitCode: number | null | undefined;
  let spawned: number | undefined;
  try {
    const child = spawn(process.execPath, [TROUPE_BIN, 'serve', '--port', '0', ...serveArgs], {
      detached: true,
      stdio: ['ignore', log, log],
      env: { ...env, TROUPE_HOME: home },
    });
    child.on('exit', (code, signal) => (exitCode = code ?? (signal ? 128 : null)));
    child.on('error', () => (exitCode = -1));
    child.unref();
    spawned = child.pid;
  } finally {
    closeSync(log);
  }
  const running = await waitForDaemon(home, () => exitCode !== undefined, 15_000, () => `${servesLastWords(home, logStart) ?? `it exited with code ${exitCode}`}; see ${daemonLogPath(home)}`);
  return { target: running.target, pid: running.state.pid, started: running.state.pid === spawned };
}

/**
 * Why the daemon just started gave up, in its own words: its last `troupe serve: …` line written to
 * daemon.log after `from` (a daemon of this home holding the lock, `daemon_running` with its pid; a
 * bad option). Until 2026-12-06 the CLI said only "it exited with code 1; see daemon.log".
 */
function servesLastWords(home: string, from: number): string | undefined {
  try {
    const fd = openSync(daemonLogPath(home), 'r');
    try {
      const length = Math.min(fstatSync(fd).size - from, 64 * 1024);
      if (length <= 0) return undefined;
      const buf = Buffer.alloc(length);
      const read = readSync(fd, buf, 0, length, from);
      const line = buf.toString('utf8', 0, read).split('\n').reverse().find((l) => l.startsWith('troupe serve: '));
      return line?.slice('troupe serve: '.length);
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/**
 * SIGTERM to the daemon of `home`; resolves once it exited and removed its state file, or undefined
 * when none runs. The daemon is the process the state file names if it answers at the file's URL,
 * else the one holding the home's lock, when the lock proves that process is still its holder.
 */
export async function stopDaemon(home: string, timeoutMs = 35_000): Promise<{ pid: number } | undefined> {
  // A state file outlives a daemon killed hard (or a reboot), and its pid may since have been given to
  // another process: only a pid whose daemon answers at the file's URL is signalled, or the lock's.
  const look = await lookAtDaemon(home, 5_000);
  const { holder } = look;
  // Only `troupe serve` takes the lock, and a lock naming its holder's start time cannot name
  // another process: that pid is the daemon, whatever became of its state file (removed, damaged,
  // naming another URL) and whether it answers (hung, or stopping already).
  const proven = holder?.sameProcess ? holder.pid : undefined;
  let pid: number;
  if (look.answers) {
    pid = look.answers.state.pid;
  } else if (proven !== undefined) {
    pid = proven;
  } else if (look.silent) {
    const { silent } = look;
    throw new CliError('daemon_unreachable', `pid ${silent.pid} of ${daemonStatePath(home)} does not answer at ${silent.url}: left alone, as it may be another process by now (a stale file); if it is a hung troupe daemon, kill ${silent.pid}`);
  } else if (holder) {
    // A lock naming a pid only (no /proc here to give its start time): the pid may have come round.
    throw new CliError('daemon_unreachable', `pid ${holder.pid} holds ${daemonLockPath(home)} but ${daemonStatePath(home)} does not lead to it: left alone, as this system cannot tell that pid is still the daemon; if it is a troupe daemon, kill ${holder.pid}`);
  } else {
    return undefined;
  }
  process.kill(pid, 'SIGTERM');
  const started = Date.now();
  let stoppedSince: number | undefined;
  while (Date.now() - started < timeoutMs) {
    if (!pidAlive(pid) && !existsSync(daemonStatePath(home))) return { pid };
    // A daemon killed hard cannot remove its file: once the process is gone, the file is stale.
    if (!pidAlive(pid) && Date.now() - started > 2_000) return { pid };
    // A stopped process (SIGSTOP, Ctrl-Z in its terminal) acts on the SIGTERM only once continued:
    // said after a moment (a debugger's or a test's short hold is waited out), not after the whole wait.
    if (isHeldStill(pid)) {
      stoppedSince ??= Date.now();
      if (Date.now() - stoppedSince >= STOPPED_PATIENCE_MS) {
        throw new CliError('daemon_unreachable', `the daemon (pid ${pid}) is stopped (SIGSTOP, or Ctrl-Z in its terminal), so it has not acted on the SIGTERM sent to it: 'kill -CONT ${pid}' lets it stop cleanly, 'kill -9 ${pid}' ends it at once`);
      }
    } else {
      stoppedSince = undefined;
    }
    await sleep(40);
  }
  // Until 2026-12-07 this said only that it did not stop, with no word on what it was doing nor what to do.
  const state = procStatFields(pid)?.[0];
  throw new CliError('daemon_unreachable', `the daemon (pid ${pid}) did not stop within ${Math.round(timeoutMs / 1000)} s${state ? ` (it still runs, in state ${state})` : ''}: 'troupe daemon logs' may say what it is doing; 'kill -9 ${pid}' ends it at once (its spawner stops its session processes)`);
}

/** How long `daemon stop` waits on a daemon stopped by a signal before saying so. */
const STOPPED_PATIENCE_MS = 2_000;

/** Whether `pid` is stopped by a signal or a tracer (/proc state T or t): it takes no signal but SIGKILL and SIGCONT until continued. */
function isHeldStill(pid: number): boolean {
  const state = procStatFields(pid)?.[0];
  return state === 'T' || state === 't';
}
