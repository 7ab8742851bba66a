/**
 * CommandBackend on the local machine: `sh -c` in its own process group, combined output capped,
 * and the whole group killed on timeout, on abort, and after the shell exits (so a stray
 * background job cannot outlive the call or hold the pipes open).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { readdir, readlink } from 'node:fs/promises';
import type { CommandBackend, CommandOutcome } from './backends.js';
import { CappedOutput } from './capped-output.js';
import { carriesMarker, signalProcessesWhere } from '../core/marked-processes.js';

export interface LocalCommandOptions {
  /** Shell used for `-c`; default `/bin/sh`. */
  shell?: string;
  /** Time between SIGTERM and SIGKILL of the process group; default 2000 ms. */
  killGraceMs?: number;
  /**
   * Variables of the agent's environment that commands do not inherit: the agent's own model
   * credentials (CREDENTIAL_ENV_VARS), which are there for its model calls, not for what the model
   * decides to run.
   */
  withheldEnv?: readonly string[];
}

/** Sends a signal to a whole process group; a group that is already gone is not an error. */
function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * The variable that marks every process a command starts. `setsid` (or a daemonizing double fork)
 * leaves the process group, so the group kill misses it; the environment is inherited across
 * both, so on Linux the processes still carrying the marker are found in /proc and stopped too
 * (src/core/marked-processes.ts).
 */
export const COMMAND_MARKER_ENV = 'TROUPE_COMMAND_ID';

/**
 * troupe's own credential, withheld from every command whatever the options say: TROUPE_TOKEN is the
 * bearer token of a daemon (with TROUPE_URL, possibly one on another machine, whose token file is not
 * here to read), which lets its holder drive every session on it. Until 2026-12-06 an agent started
 * from a shell that had it set handed it to whatever the model ran (`echo $TROUPE_TOKEN`).
 */
export const TROUPE_CREDENTIAL_ENV: readonly string[] = ['TROUPE_TOKEN'];

/**
 * What the command's stdout and stderr are (`socket:[inode]`: Node gives a child socket pairs), read
 * from the shell's /proc entry right after the spawn, while it has only just exec'd; empty where
 * there is no /proc, or when the shell is already gone (then only the group and the marker count).
 */
function outputEnds(pid: number | undefined): string[] {
  if (pid === undefined) return [];
  const ends: string[] = [];
  for (const fd of [1, 2]) {
    try {
      ends.push(readlinkSync(`/proc/${pid}/fd/${fd}`));
    } catch {
      // no /proc, or the shell has exited already
    }
  }
  return ends;
}

/** Whether process `pid` holds one of the command's output ends. */
async function holdsOutput(pid: number, ends: readonly string[]): Promise<boolean> {
  if (ends.length === 0) return false;
  for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [] as string[])) {
    if (ends.includes(await readlink(`/proc/${pid}/fd/${fd}`).catch(() => ''))) return true;
  }
  return false;
}

/**
 * Signals every process (this one excluded) still carrying the command's marker, or holding one of
 * its output ends (`ends`: none once the output has closed), in one reading of /proc. A process that
 * left the group (`setsid`) and cleared its environment (`env -i`), so that neither the group kill
 * nor the marker reaches it, still holds the output it inherited: until 2026-12-07 such a one
 * outlived the command, and held the call until the drain timer gave up on its output.
 */
function signalLeftovers(marker: string, ends: readonly string[], signal: NodeJS.Signals): Promise<number> {
  const carries = carriesMarker(COMMAND_MARKER_ENV, marker);
  return signalProcessesWhere(async (pid) => (await carries(pid)) || holdsOutput(pid, ends), signal);
}

/** The agent's environment without the withheld variables. */
function inheritedEnv(withheld: readonly string[]): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of [...TROUPE_CREDENTIAL_ENV, ...withheld]) delete env[name];
  return env;
}

export function createLocalCommandBackend(options: LocalCommandOptions = {}): CommandBackend {
  const shell = options.shell ?? '/bin/sh';
  const killGraceMs = options.killGraceMs ?? 2000;
  const withheld = options.withheldEnv ?? [];

  return {
    run(request, ctx) {
      return new Promise<CommandOutcome>((resolve, reject) => {
        const output = new CappedOutput(request.outputByteLimit);
        let timedOut = false;
        let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
        let settled = false;
        let killTimer: NodeJS.Timeout | undefined;
        let drainTimer: NodeJS.Timeout | undefined;

        const marker = randomUUID();
        const child = spawn(shell, ['-c', request.command], {
          cwd: request.cwd,
          env: { ...inheritedEnv(withheld), ...request.env, [COMMAND_MARKER_ENV]: marker },
          // Own process group (pgid = pid) so that one kill reaches every descendant.
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        const pgid = child.pid;
        const ends = outputEnds(child.pid);

        /** SIGTERM now, SIGKILL after the grace period if anything in the group is still alive. */
        const terminate = (): void => {
          if (pgid === undefined || killTimer) return;
          signalGroup(pgid, 'SIGTERM');
          void signalLeftovers(marker, ends, 'SIGTERM');
          killTimer = setTimeout(() => {
            if (signalGroup(pgid, 0)) signalGroup(pgid, 'SIGKILL');
            void signalLeftovers(marker, settled ? [] : ends, 'SIGKILL');
          }, killGraceMs);
          killTimer.unref();
        };

        const timeout = setTimeout(() => {
          timedOut = true;
          terminate();
        }, request.timeoutMs);
        const onAbort = (): void => terminate();
        ctx.signal.addEventListener('abort', onAbort, { once: true });
        if (ctx.signal.aborted) terminate();

        const cleanup = (): void => {
          clearTimeout(timeout);
          if (drainTimer) clearTimeout(drainTimer);
          ctx.signal.removeEventListener('abort', onAbort);
        };

        const finish = (): void => {
          if (settled) return;
          settled = true;
          cleanup();
          child.stdout?.destroy();
          child.stderr?.destroy();
          resolve({
            output: output.text(),
            truncated: output.truncated,
            exitCode: exit?.code ?? null,
            signal: exit?.signal ?? null,
            timedOut,
          });
        };

        child.stdout?.on('data', (chunk: Buffer) => output.push(chunk));
        child.stderr?.on('data', (chunk: Buffer) => output.push(chunk));
        child.once('error', (err) => {
          if (settled) return;
          settled = true;
          cleanup();
          reject(err);
        });
        child.once('exit', (code, signal) => {
          exit = { code, signal };
          // The command has ended: the timeout has no more say. Until 2026-12-07 it ran on while the
          // pipes drained, and a leftover that held them past it (ignoring the SIGTERM below) made a
          // command that had exited in time a timeout "killed".
          clearTimeout(timeout);
          // Whatever the shell left behind in its group goes too.
          terminate();
          // Pipes close once every holder is dead; if one survives SIGTERM, stop waiting after
          // the SIGKILL has had its chance.
          drainTimer = setTimeout(finish, killGraceMs + 500);
        });
        child.once('close', finish);
      });
    },
  };
}
