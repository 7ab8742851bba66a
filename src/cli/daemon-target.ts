/**
 * Which daemon a command talks to: TROUPE_URL (+ TROUPE_TOKEN) for a remote one, never started
 * here; else the daemon of $TROUPE_HOME, started on demand; or, with --standalone, a private one.
 */
import { resolveTroupeHome } from '../store/paths.js';
import { VERSION } from '../core/version.js';
import { CliError, type CliIo } from './cli-io.js';
import { DaemonClient, type DaemonTarget } from './daemon.client.js';
import { readToken } from './daemon-home.js';
import { findDaemon } from './daemon-locate.js';
import { startDaemon } from './daemon-process.js';
import { startStandalone } from './standalone-daemon.js';
import { printable } from './terminal-text.js';

/** A target plus what to do when the command is over (stop a standalone daemon). */
export interface Connection {
  target: DaemonTarget;
  release(): Promise<void>;
}

const nothing = async () => undefined;

/** TROUPE_URL/TROUPE_TOKEN, if set. */
export function remoteTarget(env: NodeJS.ProcessEnv): DaemonTarget | undefined {
  const url = env.TROUPE_URL?.trim();
  if (!url) return undefined;
  // Quoted in the errors below without what could be a password (`//user:secret@`).
  const shown = url.replace(/\/\/[^/]*@/, '//…@');
  if (!/^https?:\/\//.test(url)) throw new CliError('usage', `TROUPE_URL must start with http:// or https://, got '${shown}'`);
  // A URL that does not parse (`http://`, a port over 65535, `http://[::1`) is a mistake in the
  // setting, not a daemon that cannot be reached: until 2026-12-06 it was daemon_unreachable, exit 1.
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError('usage', `TROUPE_URL is not a valid URL, got '${shown}'`);
  }
  // fetch refuses such a URL anyway; and the error line quoted it, password and all (until 2026-12-06).
  if (parsed.username || parsed.password) throw new CliError('usage', `TROUPE_URL must not carry a user or password (the token goes in TROUPE_TOKEN), got '${shown}'`);
  // Every route is appended to the URL: after a query or a fragment it lands in them, and the daemon
  // was asked for `/` (until 2026-12-07 `No route for GET / (method_not_found)`). Quoted without
  // them, which may hold a secret as well (`?token=`).
  if (/[?#]/.test(url)) throw new CliError('usage', `TROUPE_URL must not carry a query or a fragment (the daemon's address only), got '${shown.replace(/[?#].*$/, '')}?…'`);
  const token = env.TROUPE_TOKEN?.trim() || readToken(resolveTroupeHome(env));
  if (!token) throw new CliError('usage', 'TROUPE_URL is set but no token: set TROUPE_TOKEN (the remote `troupe daemon token`)');
  return { url: url.replace(/\/+$/, ''), token, remote: true };
}

/** Prints a line on stderr with TROUPE_LOG=debug (a wait the user would otherwise not see the reason of). */
export const debugLine =
  (io: CliIo) =>
  (line: string): void =>
    void (io.env.TROUPE_LOG === 'debug' && io.stderr.write(`troupe: ${line}\n`));

/**
 * The daemon for a command. `autoStart` starts the local daemon when none runs; `standalone` starts
 * a private one that `release()` stops.
 */
export async function connectDaemon(io: CliIo, opts: { autoStart: boolean; standalone?: boolean }): Promise<Connection> {
  if (opts.standalone) {
    const s = await startStandalone(io.env);
    debugLine(io)(`standalone daemon pid ${s.pid} at ${s.target.url} (home ${s.home})`);
    return { target: s.target, release: () => s.stop() };
  }
  const remote = remoteTarget(io.env);
  if (remote) {
    // One cheap request first, so an unreachable daemon is one clear line, not a transport error.
    await new DaemonClient(remote).health(5_000);
    return { target: remote, release: nothing };
  }
  const home = resolveTroupeHome(io.env);
  const running = await findDaemon(home, { waiting: debugLine(io) });
  if (running) {
    if (running.version !== VERSION) {
      io.stderr.write(`troupe: the daemon runs version ${printable(String(running.version))}, this CLI is ${VERSION} ('troupe daemon start --force' replaces it)\n`);
    }
    return { target: running.target, release: nothing };
  }
  if (!opts.autoStart) throw new CliError('daemon_unreachable', `no troupe daemon is running for ${home} (start one with 'troupe daemon start')`);
  return { target: (await startDaemon(home, io.env)).target, release: nothing };
}
