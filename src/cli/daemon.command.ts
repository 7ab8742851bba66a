/**
 * `troupe daemon start | stop | status | logs | token`: the local daemon's lifecycle, found through
 * its state file in $TROUPE_HOME (spec/daemon.md §Files).
 */
import { resolveTroupeHome } from '../store/paths.js';
import { isTroupeError } from '../core/errors.js';
import { VERSION } from '../core/version.js';
import { intOption, parseCommandArgs } from './args.js';
import { CliError, EXIT, reportError, type CliIo } from './cli-io.js';
import { DaemonClient, UntrustedCertificateError, type DaemonTarget, type SessionSummary } from './daemon.client.js';
import { readDaemonState, readToken } from './daemon-home.js';
import { daemonLogs } from './daemon-logs.js';
import { DaemonStateLostError, findDaemon } from './daemon-locate.js';
import { startDaemon, stopDaemon } from './daemon-process.js';
import { debugLine, remoteTarget } from './daemon-target.js';
import { makeStyle } from './style.js';
import { printable, printableStart } from './terminal-text.js';
import type { ArgsOptions } from '../core/option-values.js';

const USAGE = `Usage: troupe daemon <start|stop|status|logs|token> [options]

Manages the local troupe daemon (the one serving $TROUPE_HOME).

  start [--force] [SERVE OPTIONS]
                        start it in the background (log: $TROUPE_HOME/daemon.log), with any option
                        of 'troupe serve' (see 'troupe serve --help'; --port defaults to 0, a free
                        port); --force replaces a running daemon of another version. A daemon
                        already running is left as it is, with the options it was started with
  stop                  stop it (SIGTERM; waits until it has exited)
  status [--json]       version, URL, uptime and sessions (TROUPE_URL: the remote daemon's)
  logs [-f] [-n N]      print the daemon log (last N lines, default 50); -f follows it
  token                 print the bearer token (for TROUPE_TOKEN on another machine)

Exit codes: 0 ok, 1 error (status: no daemon running), 2 usage.

Examples:
  troupe daemon start
  troupe daemon start --pool 4 --max-sessions 50
  troupe daemon stop && troupe daemon start --child-nice 10    # restart it with other options
  troupe daemon status --json | jq .url
  troupe daemon logs -f
  TROUPE_TOKEN=$(troupe daemon token) troupe sessions
`;

/**
 * serve's options, for `daemon start` to take and pass on to the `troupe serve` it starts: their
 * parseArgs table, and serve's own check of them (the usage mistake in `args`, in one line, or
 * undefined). One definition of them (src/daemon/serve-options.ts), given by src/main.ts, which
 * composes the faces: the CLI may not import src/daemon (DESIGN §2).
 */
export interface ServeOptionReader {
  flags: ArgsOptions;
  problem(args: string[]): string | undefined;
}

/**
 * Each subcommand's own options: one meant for another (`stop --force`, which would not kill
 * anything harder) is a usage error, not silently ignored. `start` takes serve's too (ServeOptionReader).
 */
const OPTIONS = {
  start: { force: { type: 'boolean' } },
  stop: {},
  status: { json: { type: 'boolean' } },
  logs: { follow: { type: 'boolean', short: 'f' }, lines: { type: 'string', short: 'n' } },
  token: {},
} as const;

export async function daemonCommand(args: string[], io: CliIo, serveOptions?: () => Promise<ServeOptionReader>): Promise<number> {
  const [sub, ...rest] = args;
  try {
    if (sub === '--help' || sub === '-h' || sub === 'help') return void io.stdout.write(USAGE), EXIT.ok;
    // A missing argument is a usage mistake (exit 2), as for `troupe log` and every other command.
    if (sub === undefined) throw new CliError('usage', `missing the subcommand (start, stop, status, logs or token) (try 'troupe daemon --help')`);
    if (!Object.hasOwn(OPTIONS, sub)) throw new CliError('usage', `unknown subcommand '${sub}' (try 'troupe daemon --help')`);
    // Loaded for `start` alone: another subcommand refuses serve's options as unknown all the same.
    const serve = sub === 'start' ? await serveOptions?.() : undefined;
    const { values, positionals, tokens } = parseCommandArgs(`daemon ${sub}`, rest, { ...serve?.flags, ...OPTIONS.start, json: { type: 'boolean' }, follow: { type: 'boolean', short: 'f' }, lines: { type: 'string', short: 'n' } });
    if (values.help) return void io.stdout.write(USAGE), EXIT.ok;
    const own: Record<string, unknown> = sub === 'start' ? { ...serve?.flags, ...OPTIONS.start } : OPTIONS[sub as keyof typeof OPTIONS];
    const stray = Object.keys(values).find((k) => k !== 'help' && k !== 'no-color' && !(k in own));
    if (stray) throw new CliError('usage', `unknown option '--${stray}' for 'daemon ${sub}' (try 'troupe daemon --help')`);
    if (positionals.length) throw new CliError('usage', `unexpected argument '${positionals[0]}' (try 'troupe daemon --help')`);
    const home = resolveTroupeHome(io.env);
    switch (sub) {
      case 'start':
        return await start(io, home, values.force === true, serve ? serveArgs(tokens, serve) : []);
      case 'stop': {
        const stopped = await stopDaemon(home);
        io.stdout.write(stopped ? `stopped the daemon (pid ${stopped.pid})\n` : 'no daemon is running\n');
        return EXIT.ok;
      }
      case 'status':
        return await status(io, home, values.json ?? false, values['no-color'] ?? false);
      case 'logs':
        return await daemonLogs(io, home, values.follow ?? false, intOption('daemon logs', 'lines', values.lines, 50));
      case 'token': {
        const token = remoteTarget(io.env)?.token ?? readToken(home);
        if (!token) throw new CliError('daemon_unreachable', `no token in ${home} yet (start the daemon once with 'troupe daemon start')`);
        io.stdout.write(`${token}\n`);
        return EXIT.ok;
      }
      default:
        throw new CliError('usage', `unknown subcommand '${sub}' (try 'troupe daemon --help')`);
    }
  } catch (err) {
    // Named by its subcommand only when it has one (`troupe daemon: unknown subcommand 'restart'`, not
    // `troupe daemon restart: …`, as sessions and log say it; until 2026-12-07 an unknown one was named).
    return reportError(io, `daemon${sub && Object.hasOwn(OPTIONS, sub) ? ` ${sub}` : ''}`, err);
  }
}

/**
 * The options of `serve` among start's, as given, for the `troupe serve` it starts: checked here by
 * serve's own reading of them, so that a mistake is a usage error (exit 2) before anything starts,
 * not a daemon that fails in the background.
 */
function serveArgs(tokens: ReturnType<typeof parseCommandArgs>['tokens'], serve: ServeOptionReader): string[] {
  const args: string[] = [];
  for (const t of tokens) {
    if (t.kind !== 'option' || !Object.hasOwn(serve.flags, t.name)) continue;
    // In the form given: a value joined to its option (`--tls-cert=-c.pem`, the one way parseArgs
    // takes a value that starts with a dash) stays joined, or serve would find it ambiguous.
    if (t.value === undefined) args.push(`--${t.name}`);
    else args.push(...(t.inlineValue ? [`--${t.name}=${t.value}`] : [`--${t.name}`, t.value]));
  }
  const problem = serve.problem(args);
  if (problem) throw new CliError('usage', `${problem} (try 'troupe serve --help')`);
  return args;
}

/**
 * What a start given serve's options says when it starts no daemon: the one running keeps the
 * options it was started with (they are known to it alone), and how to start it with these.
 */
function optionsUnchanged(io: CliIo, args: string[]): void {
  if (args.length === 0) return;
  io.stderr.write(`troupe daemon start: a daemon already runs, with the options it was started with (${printable(args.join(' '))} not applied): 'troupe daemon stop', then 'troupe daemon start ${printable(args.join(' '))}', restarts it with them\n`);
}

async function start(io: CliIo, home: string, force: boolean, args: string[]): Promise<number> {
  const running = await findDaemon(home, { waiting: debugLine(io) });
  if (running && running.version === VERSION) {
    io.stdout.write(`the daemon is already running at ${running.target.url} (pid ${running.state.pid})\n`);
    optionsUnchanged(io, args);
    return EXIT.ok;
  }
  if (running) {
    if (!force) throw new CliError('daemon_version_mismatch', `a daemon of version ${running.version} runs at ${running.target.url} (this CLI is ${VERSION}); 'troupe daemon start --force' replaces it`);
    await stopDaemon(home);
    io.stderr.write(`stopped the daemon of version ${printable(String(running.version))} (pid ${running.state.pid})\n`);
  }
  // Another start (a `troupe run`, a second `daemon start`) may have won the home's lock meanwhile:
  // this one's daemon gave way to it. Until 2026-12-07 every one of them said it had started the daemon.
  const { target, pid, started } = await startDaemon(home, io.env, args);
  io.stdout.write(`${started ? 'started the daemon' : 'the daemon is already running'} at ${target.url} (pid ${pid})\n`);
  if (!started) optionsUnchanged(io, args);
  return EXIT.ok;
}

function uptime(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

async function status(io: CliIo, home: string, json: boolean, noColor: boolean): Promise<number> {
  const remote = remoteTarget(io.env);
  let local: Awaited<ReturnType<typeof findDaemon>>;
  try {
    local = remote ? undefined : await findDaemon(home, { waiting: debugLine(io) });
  } catch (err) {
    // A daemon runs (it holds the lock) but cannot be reached: --json says so on stdout, with its pid.
    if (json && err instanceof DaemonStateLostError) {
      io.stdout.write(`${JSON.stringify({ running: true, url: null, pid: err.pid, home, error: { code: err.code, message: err.message } })}\n`);
      return EXIT.error;
    }
    // A daemon whose certificate this process does not trust: --json says so on stdout, as below.
    if (json && err instanceof UntrustedCertificateError) {
      io.stdout.write(`${JSON.stringify({ running: false, url: err.url, error: { code: err.code, message: err.message } })}\n`);
      return EXIT.error;
    }
    // A daemon that runs, whose token this user cannot read: as a daemon refusing the token, below.
    const state = readDaemonState(home);
    if (!json || !(err instanceof CliError) || !state) throw err;
    io.stdout.write(`${JSON.stringify({ running: true, url: state.url, pid: state.pid, home, error: { code: err.code, message: err.message } })}\n`);
    return EXIT.error;
  }
  const target: DaemonTarget | undefined = remote ?? local?.target;
  if (!target) {
    if (json) io.stdout.write(`${JSON.stringify({ running: false, home })}\n`);
    else return reportError(io, 'daemon status', new CliError('daemon_unreachable', `no daemon is running for ${home}`));
    return EXIT.error;
  }
  const client = new DaemonClient(target);
  let health: Awaited<ReturnType<DaemonClient['health']>>;
  try {
    health = await client.health();
  } catch (err) {
    // Not running, as far as this command can tell: --json says so on stdout, as above.
    if (!json || !(err instanceof CliError) || err.code !== 'daemon_unreachable') throw err;
    io.stdout.write(`${JSON.stringify({ running: false, url: target.url, error: { code: err.code, message: err.message } })}\n`);
    return EXIT.error;
  }
  const known = {
    running: true,
    url: target.url,
    version: health.version,
    cliVersion: VERSION,
    versionMatches: health.version === VERSION,
    pid: local?.state.pid ?? null,
    uptimeMs: health.uptimeMs,
    sessions: health.sessions,
  };
  let live: SessionSummary[];
  try {
    // The daemon's own rule, as its live count: a failed session keeps its child's record (its
    // restarts) and an idle-stopped one its child, but no process runs either. (A live one has a child.)
    live = (await client.sessions(false)).filter((x) => x.live);
  } catch (err) {
    // /v1/health needs no token, the session list does: a daemon that refuses the token runs, and
    // --json still says so on stdout, with the refusal, for the script that reads it.
    if (!json || !(err instanceof CliError || isTroupeError(err))) throw err;
    io.stdout.write(`${JSON.stringify({ ...known, home: remote ? null : home, error: { code: err.code, message: err.message } })}\n`);
    return EXIT.error;
  }
  const info = {
    ...known,
    liveSessions: live.map((x) => ({ id: x.id, process: x.child!.state, connections: x.connections, title: x.title ?? null, cwd: x.cwd })),
    home: remote ? null : home,
  };
  if (json) {
    io.stdout.write(`${JSON.stringify(info)}\n`);
    return EXIT.ok;
  }
  const style = makeStyle(io.stdout, io.env, noColor);
  io.stdout.write(
    [
      `troupe daemon ${printable(String(health.version))}${info.versionMatches ? '' : style.yellow(` (this CLI is ${VERSION}: 'troupe daemon start --force' replaces it)`)}`,
      `  url       ${target.url}`,
      ...(info.pid ? [`  pid       ${info.pid}`] : []),
      `  uptime    ${uptime(health.uptimeMs)}`,
      `  sessions  ${health.sessions.live} live, ${health.sessions.total} stored`,
      // The daemon's words (until 2026-12-06 the version, ids and process states were printed raw).
      ...info.liveSessions.map((x) => style.dim(`    ${printable(x.id)}  ${printable(String(x.process)).padEnd(8)}  ${printable(String(x.connections))} conn  ${printableStart(x.title ?? '', 40)}`)),
      ...(info.home ? [`  home      ${info.home}`] : []),
      '',
    ].join('\n'),
  );
  return EXIT.ok;
}
