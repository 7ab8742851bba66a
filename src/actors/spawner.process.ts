/**
 * The daemon's spawner: a small process that starts the session children, so that the daemon's own
 * loop never does (spec/daemon.md §Spawner). libuv's spawn forks and then waits until the child has
 * called execve, to report an exec failure at once; on a machine whose cores are busy (children
 * booting) the forked child waits for a CPU, and the daemon's loop waited with it, 50–140 ms per spawn
 * (bench/README.md). Here that wait holds only this process, which serves nothing else.
 *
 * It runs as `node spawner.process.js [orphanGraceMs]` with an IPC channel to the daemon (src/actors/child-spawner.ts)
 * and imports only Node (and src/core/marked-processes.ts, which imports only Node). Each child's four pipes (stdin, stdout, stderr, the fd 3 control channel) are
 * handed to the daemon over that channel and closed here: the daemon alone reads and writes them.
 * What the channel carries (JSON):
 * - in: `{ op: 'spawn', id, command, args, env }`, `{ op: 'kill', id, signal }`;
 * - out: `{ op: 'spawned', id, pid }`, then `{ op: 'stdio', id, fd }` for fd 0–3, each with its pipe,
 *   then `{ op: 'handed', id }`; `{ op: 'failed', id, code, message }` when no process started;
 *   `{ op: 'exit', id, code, signal }`; `{ op: 'swept', id, pid, processes }` (below).
 *
 * Without the daemon (its channel closed, even by a kill -9), the children see their stdin end and
 * exit by themselves; any still alive after a grace gets SIGTERM, then SIGKILL, and then this process
 * exits. No child outlives both.
 *
 * Nor does what a child started: each child carries its own marker in its environment
 * (AGENT_MARKER_ENV), which everything it starts inherits (its commands run in process groups of their
 * own, which its death does not reach). A child that dies other than by a clean exit (killed, hung,
 * out of memory, crashed) has had no chance to stop its running commands: they are found by the
 * marker and sent SIGTERM, then SIGKILL after SWEEP_GRACE_MS (`swept` tells the daemon how many).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { AGENT_MARKER_ENV, signalMarked } from '../core/marked-processes.js';

export type SpawnerRequest =
  | { op: 'spawn'; id: number; command: string; args: string[]; env: NodeJS.ProcessEnv }
  | { op: 'kill'; id: number; signal: NodeJS.Signals };

export type SpawnerReport =
  | { op: 'spawned'; id: number; pid: number }
  | { op: 'stdio'; id: number; fd: 0 | 1 | 2 | 3 }
  | { op: 'handed'; id: number }
  | { op: 'failed'; id: number; code: string; message: string }
  | { op: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null }
  | { op: 'swept'; id: number; pid: number; processes: number };

/** How long orphaned children get to exit on their own (stdin ended), and then after SIGTERM. */
const ORPHAN_GRACE_MS = Number(process.argv[2]) || 5_000;
/** Between the SIGTERM and the SIGKILL of what a dead child left running (as a command's own kill). */
const SWEEP_GRACE_MS = 2_000;
/** Sweeps under way: this process does not exit before they are done. */
const sweeps = new Set<Promise<void>>();

/** Stops whatever still carries the dead child's marker: SIGTERM, then SIGKILL after the grace. */
function sweep(id: number, pid: number, marker: string): void {
  const done = signalMarked(AGENT_MARKER_ENV, marker, 'SIGTERM')
    .then(async (processes) => {
      if (processes === 0) return;
      report({ op: 'swept', id, pid, processes });
      await new Promise((r) => setTimeout(r, SWEEP_GRACE_MS));
      await signalMarked(AGENT_MARKER_ENV, marker, 'SIGKILL');
    })
    .catch(() => undefined)
    .finally(() => {
      sweeps.delete(done);
      exitIfDone();
    });
  sweeps.add(done);
}

/** Once let go, this process ends when its last child has and nothing it left is being stopped. */
function exitIfDone(): void {
  if (lettingGo && children.size === 0 && sweeps.size === 0) process.exit(0);
}

const children = new Map<number, ChildProcess>();
/** Children whose pipes were all sent (the daemon took them, or could not: see `handed`). */
const handedOver = new Set<number>();

function report(message: SpawnerReport, pipe?: Socket, sent?: () => void): void {
  if (process.connected) process.send!(message, pipe, undefined, sent);
}

/**
 * A pipe of a child is handed over unread. Node starts reading a new pipe at once; whatever this
 * process read before the hand-over would be dropped with its copy (a child's first bytes, its
 * hello, can come before the hand-over when this process is slow to run). Stopping the read in the
 * same turn as the spawn leaves every byte in the kernel for the daemon: the poll phase, where reads
 * happen, has not run yet. Node has no public call for it.
 */
function holdUnread(pipe: Socket): void {
  const handle = (pipe as unknown as { _handle?: { reading: boolean; readStop(): number } })._handle;
  if (handle) {
    handle.reading = false;
    handle.readStop();
  }
}

function start(id: number, command: string, args: string[], env: NodeJS.ProcessEnv): void {
  if (!process.connected) return; // asked just before the daemon let go: nobody would take its pipes
  let child: ChildProcess;
  const marker = randomUUID();
  try {
    child = spawn(command, args, { env: { ...env, [AGENT_MARKER_ENV]: marker }, stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
  } catch (err) {
    // Node throws at once for some failures of the fork or exec (E2BIG, ENOMEM…).
    const e = err as NodeJS.ErrnoException;
    return report({ op: 'failed', id, code: e.code ?? 'UNKNOWN', message: e.message });
  }
  if (child.pid === undefined) {
    // No process (EMFILE, EAGAIN, ENOENT…): Node says why on a later tick.
    child.once('error', (e: NodeJS.ErrnoException) => report({ op: 'failed', id, code: e.code ?? 'UNKNOWN', message: e.message }));
    return;
  }
  const pipes = [child.stdin, child.stdout, child.stderr, child.stdio[3]] as Socket[];
  pipes.slice(1).forEach(holdUnread);
  // And out of Node's hands here: at the child's exit Node destroys its stdin and resumes its other
  // pipes (to drain them), which for a child that died before the hand-over would close a pipe still
  // to be sent and read what the daemon must get (its last words on stderr).
  const detached = child as { stdin: unknown; stdout: unknown; stderr: unknown; stdio: unknown[] };
  detached.stdin = detached.stdout = detached.stderr = null;
  detached.stdio.fill(null);
  children.set(id, child);
  child.on('error', () => undefined); // a kill of a process already gone
  const pid = child.pid;
  child.once('exit', (code, signal) => {
    children.delete(id);
    handedOver.delete(id);
    report({ op: 'exit', id, code, signal });
    // A clean exit stopped its commands itself; reading every process's environment for each of a
    // burst of idle stops would be for nothing.
    if (code !== 0 || signal !== null) sweep(id, pid, marker);
    exitIfDone();
  });
  report({ op: 'spawned', id, pid: child.pid });
  // Each pipe goes as its own message (one handle per message); Node keeps them in order, and sends
  // any later message, this child's exit included, only after them. A pipe the daemon could not take
  // (out of descriptors: Node retries it three times, then drops it with a warning) is simply not
  // among what it got when `handed` comes.
  // `handed` is written only once the last pipe was answered for, and those were closed here.
  pipes.forEach((pipe, fd) => report({ op: 'stdio', id, fd: fd as 0 | 1 | 2 | 3 }, pipe));
  report({ op: 'handed', id }, undefined, () => handedOver.add(id));
}

process.on('message', (m: SpawnerRequest) => {
  if (m.op === 'spawn') start(m.id, m.command, m.args, m.env);
  else if (m.op === 'kill') children.get(m.id)?.kill(m.signal);
});

// Node's own printing of warnings is off (--no-warnings): a pipe the daemon could not take (above) is
// the daemon's to report, and it does; any other warning is printed as Node would.
process.on('warning', (w) => w.name !== 'SentHandleNotReceivedWarning' && process.stderr.write(`${w.stack ?? w}\n`));

/**
 * The daemon is gone, or let go (its channel closed). A child whose pipes it never got is killed at
 * once: nothing can talk to it, and its stdin, held here, would never end. The others are given
 * the grace to exit as their stdin ends.
 */
let lettingGo = false;
function letGo(): void {
  if (lettingGo) return;
  lettingGo = true;
  for (const [id, child] of children) if (!handedOver.has(id)) child.kill('SIGKILL');
  exitIfDone();
  const killAll = (signal: NodeJS.Signals) => () => children.forEach((c) => c.kill(signal));
  setTimeout(killAll('SIGTERM'), ORPHAN_GRACE_MS).unref();
  setTimeout(killAll('SIGKILL'), 2 * ORPHAN_GRACE_MS).unref();
}

process.on('disconnect', letGo);

// This process and its children run in a session of their own (the daemon forks it detached:
// child-spawner.ts), out of reach of the signals of the daemon's terminal. A signal sent to the
// daemon's process group by other means (a service manager's SIGTERM, a `kill -INT -PGID`) is the
// daemon's to act on all the same: it stops its children and then lets this process go (the channel
// closes, above). Dying of it here first made the daemon log a lost spawner, as an error, during its
// clean shutdown. A handler (unlike SIG_IGN) is not inherited through exec: the children keep the
// signals' default actions, and a daemon killed hard still ends this process through its channel.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => undefined);
// Node may never say `disconnect` when the channel closes while a pipe is on its way (it waits for
// that pipe's acknowledgement): a daemon that died has also made this process an orphan.
const daemonPid = process.ppid;
setInterval(() => process.ppid !== daemonPid && letGo(), 1_000).unref();
