/**
 * Finding the local daemon through its files (spec/daemon.md §Files). The state file says where it
 * listens; the lock says which process serves the home, whatever the state file says. A running
 * daemon writes its state file again within a second when it is removed, cut short or changed, so
 * a client that finds the lock held but the state file not leading to its holder waits for that,
 * and then says what is wrong instead of starting a second daemon that would fail on the lock.
 */
import { CliError } from './cli-io.js';
import { DaemonClient, UntrustedCertificateError, type DaemonTarget } from './daemon.client.js';
import { DAEMON_STATE_CHECK_MS, daemonLockHolder, daemonLockPath, daemonStatePath, daemonTokenPath, type DaemonState, type LockHolder } from '../store/index.js';
import { pidAlive, readDaemonStateFile, readToken } from './daemon-home.js';
import { printable } from './terminal-text.js';

export interface RunningDaemon {
  state: DaemonState;
  target: DaemonTarget;
  version: string;
}

/** How long a client waits for a daemon holding the lock to write its state file again: three of its looks. */
const STATE_REPAIR_WAIT_MS = 3 * DAEMON_STATE_CHECK_MS;
/** A daemon that took the lock this recently may still be starting (opening its index): it writes the file once it listens. */
const STATE_START_WAIT_MS = 15_000;

/**
 * A daemon holds the home's lock, but the state file does not lead to it (removed, damaged or
 * naming another process or URL) and it has not written it again.
 */
export class DaemonStateLostError extends CliError {
  readonly pid: number;
  constructor(holder: LockHolder, home: string, problem: string) {
    super('daemon_state_lost', `a daemon (pid ${holder.pid}) holds ${daemonLockPath(home)}, but ${daemonStatePath(home)} ${problem}, and the daemon has not written it again (stopping, hung, a full disk, or older than this CLI: 'troupe daemon logs' may say): ${stopHint(holder, home)}`);
    this.pid = holder.pid;
  }
}

/**
 * How to be rid of the lock's holder. `troupe daemon stop` signals it only when the lock proves the
 * pid is still that process (it names its start time, where /proc gives it: stopDaemon in
 * daemon-process.ts); without /proc it leaves the pid alone, which until 2026-12-07 the hint did not
 * say ("'troupe daemon stop' stops it": it did not).
 */
function stopHint({ pid, sameProcess }: LockHolder, home: string): string {
  if (sameProcess) return `'troupe daemon stop' stops it, then the next command starts one`;
  return `its lock names pid ${pid} without its start time, so 'troupe daemon stop' cannot tell it is still that daemon and leaves it alone: if it is a troupe daemon, kill ${pid}, else remove ${daemonLockPath(home)}; then the next command starts one`;
}

/**
 * What one look at the home saw: the live holder of its lock, and either the daemon that answers
 * where the state file says or what is wrong with the file (said after its path).
 */
type DaemonLook = { holder: LockHolder | undefined } & ({ answers: { state: DaemonState; version: string }; problem?: undefined } | { answers?: undefined; problem: string; silent?: DaemonState });

/**
 * One look at the home: the lock's holder (read once), and the daemon the state file names if it
 * runs and answers there (within `healthTimeoutMs`); else what is wrong, and, when the state file
 * names a live process (the lock's holder, if there is one) where nothing answers, that state (`silent`).
 * Throws UntrustedCertificateError when the daemon answers with a certificate this process does not trust.
 */
export async function lookAtDaemon(home: string, healthTimeoutMs?: number): Promise<DaemonLook> {
  const read = readDaemonStateFile(home);
  const holder = daemonLockHolder(home);
  if (!read.state) return { holder, problem: read.problem };
  const { state } = read;
  // A file naming another process (copied from another home, edited by hand) must not lead there.
  if (holder && holder.pid !== state.pid) return { holder, problem: `names pid ${state.pid}, not the daemon's` };
  if (!pidAlive(state.pid)) return { holder, problem: `names pid ${state.pid}, which is not running` };
  let health;
  try {
    health = await new DaemonClient({ url: state.url, token: '', remote: false }).health(healthTimeoutMs);
  } catch (err) {
    if (err instanceof UntrustedCertificateError) throw err;
    return { holder, problem: `names ${printable(String(state.url))}, where nothing answers`, silent: state };
  }
  return { holder, answers: { state, version: health.version } };
}

/** The daemon that answered, with its token: read once a daemon answers (/v1/health needs none), one that cannot be read is an error then. */
async function running(home: string, { state, version }: { state: DaemonState; version: string }): Promise<RunningDaemon> {
  return { state, target: { url: state.url, token: await daemonToken(home, state.url), remote: false }, version };
}

/**
 * The token of the daemon answering at `url`. A running daemon writes its token file again within a
 * second of its removal, so a client that finds none waits for that (three of its looks), then says
 * the file is missing. Until 2026-12-07 it sent an empty token and said the daemon "refused the
 * token (forbidden)", naming neither the file nor what to do.
 */
async function daemonToken(home: string, url: string): Promise<string> {
  const until = Date.now() + STATE_REPAIR_WAIT_MS;
  for (;;) {
    const token = readToken(home);
    if (token) return token;
    if (Date.now() >= until) {
      throw new CliError('daemon_unreachable', `the daemon at ${printable(url)} runs, but its token file ${daemonTokenPath(home)} is missing or empty and the daemon has not written it again (see troupe daemon logs); restart it (troupe daemon stop, then troupe daemon start) to write a new one`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The running daemon of `home` if its state file names a live process that answers health (one
 * look). Throws UntrustedCertificateError when it answers with a certificate this process does not
 * trust, and readToken's error when the daemon's token cannot be read.
 */
export async function runningDaemon(home: string): Promise<RunningDaemon | undefined> {
  const look = await lookAtDaemon(home);
  return look.answers && (await running(home, look.answers));
}

/**
 * The running daemon of `home`, or undefined when none holds its lock. While one holds the lock but
 * the state file does not lead to it, waits for the daemon to write the file again (or, for one that
 * took the lock moments ago, to start listening); then throws DaemonStateLostError. `waiting` is
 * called once when the wait begins (TROUPE_LOG=debug prints it); `pause` is the wait between looks.
 */
export async function findDaemon(
  home: string,
  { waiting = () => {}, pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms)) }: { waiting?: (line: string) => void; pause?: (ms: number) => Promise<void> } = {},
): Promise<RunningDaemon | undefined> {
  let until: number | undefined;
  for (;;) {
    const look = await lookAtDaemon(home);
    if (look.answers) return await running(home, look.answers);
    const { holder } = look;
    if (!holder) return undefined;
    const now = Date.now();
    if (until === undefined) {
      until = Math.max(now + STATE_REPAIR_WAIT_MS, Math.min(holder.sinceMs + STATE_START_WAIT_MS, now + STATE_START_WAIT_MS));
      waiting(`the daemon (pid ${holder.pid}) holds ${daemonLockPath(home)}, but ${daemonStatePath(home)} ${look.problem}; waiting for the daemon to write it again`);
    }
    if (now >= until) throw new DaemonStateLostError(holder, home, look.problem);
    await pause(100);
  }
}
