/**
 * Processes found by a marker in their environment (Linux: /proc/<pid>/environ). A process group
 * misses what left it (`setsid`, a daemonizing double fork), and a parent's death leaves its
 * descendants to init; the environment is inherited across all of these, so the processes still
 * carrying `NAME=marker` are the ones a process started, wherever they went. One that clears its
 * environment (`env -i`) escapes; where there is no /proc nothing is found.
 *
 * Used by a command's kill (src/tools/local-command.backend.ts) and by the daemon's spawner for what
 * a session process that died had left running (src/actors/spawner.process.ts). Imports only Node.
 */
import { readdir, readFile } from 'node:fs/promises';

/**
 * The variable that marks a session process of the daemon and everything it starts (set by the
 * daemon's spawner, src/actors/spawner.process.ts): what a session process that died left running is
 * found by it. Whatever a session process starts with an environment of its own (an MCP server) must
 * be given it too.
 */
export const AGENT_MARKER_ENV = 'TROUPE_AGENT_MARK';

/**
 * Whether a process's environment holds `name=marker` (another user's process, or one gone meanwhile,
 * is not ours): asked of every process in /proc, so what it looks for is made once, not once a process.
 */
export function carriesMarker(name: string, marker: string): (pid: number) => Promise<boolean> {
  const needle = Buffer.from(`\0${name}=${marker}\0`);
  return async (pid) => {
    const environ = await readFile(`/proc/${pid}/environ`).catch(() => undefined);
    return environ !== undefined && Buffer.concat([Buffer.from([0]), environ]).includes(needle);
  };
}

/** Pids of the live processes `match` takes, the caller excluded: /proc read once. */
async function processesWhere(match: (pid: number) => Promise<boolean>): Promise<number[]> {
  const names = await readdir('/proc').catch(() => [] as string[]);
  const pids = names.map(Number).filter((pid) => Number.isInteger(pid) && pid > 0 && pid !== process.pid);
  const taken = await Promise.all(pids.map(async (pid) => ((await match(pid)) ? pid : undefined)));
  return taken.filter((pid): pid is number => pid !== undefined);
}

/** Signals every process `match` takes; resolves with how many there were. */
export async function signalProcessesWhere(match: (pid: number) => Promise<boolean>, signal: NodeJS.Signals): Promise<number> {
  const pids = await processesWhere(match);
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
  return pids.length;
}

/** Signals every process still carrying the marker; resolves with how many there were. */
export function signalMarked(name: string, marker: string, signal: NodeJS.Signals): Promise<number> {
  return signalProcessesWhere(carriesMarker(name, marker), signal);
}
