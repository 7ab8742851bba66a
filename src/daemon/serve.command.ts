/**
 * `troupe serve`: the daemon, in the foreground. Composition root: the HTTP server (ACP transport at
 * /acp, management API at /v1, metrics), the relay with its warm pool of `troupe acp --supervised`
 * children, the session index, and the files in $TROUPE_HOME (token, lock, state). docs/daemon.md.
 */
import { writeFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { createStderrLogger, keepServingThroughStrayErrors, logLevelFrom, writeStderr } from '../core/stderr-logger.js';
import { isTroupeError } from '../core/errors.js';
import { VERSION } from '../core/version.js';
import { timeoutMsFromEnv } from '../core/option-values.js';
import { DEFAULT_CHILD_SPEC } from '../machines/restart-window.js';
import { ChildPool } from '../actors/child-pool.actor.js';
import type { ChildProcessHandle } from '../actors/child-process.actor.js';
import { ChildLauncher } from './child-launch.js';
import { ChildSpawner } from '../actors/child-spawner.js';
import { nextTurn } from '../core/next-turn.js';
import { privateHome, recheckInBackground, resolveTroupeHome, SessionIndex, sessionsDir, unusableHomeMessage } from '../store/index.js';
import { loadConfig } from '../providers/config.js';
import { defaultModel, defaultModelWarning, resolveModel } from '../providers/registry.js';
import { initializeResult } from '../acp/capabilities.js';
import { HttpServer } from './http/http-server.js';
import { Relay } from './relay/relay.js';
import { childInitializeParams } from './relay/child-wire.js';
import { acquireLock, ensureToken, keepStateFile, removeState, writeState, type DaemonLock } from './daemon-home.js';
import { registerManagementRoutes } from './api/management.routes.js';
import { MachineHub } from './machine-hub.js';
import { Metrics } from './metrics.js';
import { SessionFeeds } from './session-feeds.js';
import { MiB, readServeOptions, ServeUsageError, type ServeOptions } from './serve-options.js';
import type { SessionReplays } from './inspector/session-replays.js';
import { daemonMetrics } from './daemon-metrics.js';

/** How long a stop may take before the children are killed and the daemon exits 1 (TROUPE_SHUTDOWN_TIMEOUT_MS). */
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;

/** A usage mistake: one line, exit 2, as the CLI's (docs/cli.md §Errors and exit codes). */
function usage(problem: string): number {
  process.stderr.write(`troupe serve: ${problem} (try 'troupe serve --help')\n`);
  return 2;
}

export async function runServe(args: string[]): Promise<number> {
  let opts: ServeOptions;
  try {
    opts = readServeOptions(args);
  } catch (err) {
    if (err instanceof ServeUsageError) return usage(err.message);
    throw err;
  }

  const env = process.env;
  const logger = createStderrLogger('troupe serve', logLevelFrom(env));
  const home = resolveTroupeHome(env);
  const signals = stopSignals();
  let lock: DaemonLock;
  try {
    lock = acquireLock(home);
  } catch (err) {
    // A home it cannot make or write is said as the CLI says it for `troupe daemon start`.
    const problem = isTroupeError(err) ? `${err.message} (${err.code})` : (err as NodeJS.ErrnoException).code ? `${unusableHomeMessage(home, err)} (daemon_start_failed)` : (err as Error).message;
    process.stderr.write(`troupe serve: ${problem}\n`);
    return 1;
  }
  try {
    return await serve({ home, env, logger, lock, signals, opts });
  } catch (err) {
    lock.release();
    process.stderr.write(`troupe serve: ${(err as Error).message}${isTroupeError(err) ? ` (${err.code})` : ''}\n`);
    if (env.TROUPE_LOG === 'debug') process.stderr.write(`${(err as Error).stack}\n`);
    return 1;
  }
}

interface ServeSettings {
  home: string;
  env: NodeJS.ProcessEnv;
  logger: ReturnType<typeof createStderrLogger>;
  lock: DaemonLock;
  signals: StopSignals;
  opts: ServeOptions;
}

async function serve({ home, env, logger, lock, signals, opts }: ServeSettings): Promise<number> {
  const startedAt = Date.now();
  // Read once, at start, as the daemon's other settings (a test makes a stop that hangs end sooner).
  const shutdownTimeoutMs = timeoutMsFromEnv(env, 'TROUPE_SHUTDOWN_TIMEOUT_MS', DEFAULT_SHUTDOWN_TIMEOUT_MS, logger);
  privateHome(home, logger);
  const token = ensureToken(home, logger);
  // Sessions are created in bursts: gather a quarter second of index changes into one write.
  const index = await SessionIndex.open(sessionsDir(home), { logger, writeDelayMs: 250 });
  await index.prepareWrites();
  const images = (() => {
    try {
      const config = loadConfig(env);
      // Said at start: the children refuse each new session with it (their sessions of other models go on).
      const warning = defaultModelWarning(env, config);
      if (warning) logger.warn(warning);
      return resolveModel(defaultModel(env, config), env, config).capabilities.images;
    } catch (err) {
      logger.warn('configuration problem (sessions will report it)', { error: String(err) });
      return false;
    }
  })();
  const childEnv = { ...env, TROUPE_HOME: home, TROUPE_HEARTBEAT_MS: String(opts.heartbeatMs) };
  const metrics = new Metrics();
  const counters = daemonMetrics(metrics);
  const spawner = new ChildSpawner(logger, childEnv);
  const launcher = new ChildLauncher(spawner, childEnv, opts.memory, logger, opts.snapshot);
  const launch = async () => {
    counters.spawned();
    const child = await launcher.launch();
    if (opts.childNice > 0) {
      try {
        niceChild(child.pid, Math.min(19, opts.childNice));
      } catch (err) {
        logger.warn('could not lower the priority of a child', { pid: child.pid, error: String(err) });
      }
    }
    return child;
  };
  const initializeAhead = (child: ChildProcessHandle) =>
    void child.initializeAhead(childInitializeParams({}, VERSION)).then((ok) => logger.debug(ok ? 'pooled child initialized ahead' : 'pooled child not initialized ahead', { pid: child.pid }));
  const pool = new ChildPool(opts.pool, launch, logger, { prepare: initializeAhead, heartbeatTimeoutMs: opts.heartbeatTimeoutMs, startupTimeoutMs: opts.startupTimeoutMs });
  const hub = new MachineHub();
  const running = new Map<string, string>();
  // A deleted session's feed is refused whenever one is opened for it, as GET /v1/sessions/:id/events refuses it.
  const feeds = new SessionFeeds(home, opts.feedQueueMb * MiB, (id) => index.get(id)?.status === 'deleted');
  // The inspector's replays of sessions (set once the inspector is registered): a deleted session's
  // goes with it, and a rewound one's is read again.
  let replays: Pick<SessionReplays, 'forget' | 'rewound'> | undefined;
  const relay = new Relay({
    options: {
      childSpec: { ...DEFAULT_CHILD_SPEC, intensity: opts.intensity, periodMs: opts.periodMs },
      idleMs: opts.idleMs,
      heartbeatTimeoutMs: opts.heartbeatTimeoutMs,
      startupTimeoutMs: opts.startupTimeoutMs,
      maxLiveSessions: opts.maxSessions,
    },
    pool,
    index,
    logger,
    version: VERSION,
    initializeResult: initializeResult(images),
    observer: {
      events: (sessionId, reported) => {
        feeds.report(sessionId, reported);
        counters.events(reported.count);
        // Turn boundaries are indexed events: the burst is not decoded for them.
        for (const e of reported.indexed) {
          if (e.type === 'turn_started') running.set(sessionId, e.turnId);
          else if (e.type === 'turn_completed' && running.get(sessionId) === e.turnId) running.delete(sessionId);
        }
      },
      transition: (sessionId, machine, state, event, at) => sessionId && hub.record(sessionId, { machine, state, event, at }),
      exited: (sessionId, exit, info) => {
        counters.exited(exit.reason, info);
        // The turn a process ran ended with it (its next process, if any, logs it as agent_crashed):
        // a failed session, which has none, would name it as running for the daemon's lifetime.
        if (sessionId) running.delete(sessionId);
      },
      slowChild: () => counters.slowChild(),
      answered: (method, seconds, ok) => counters.answered(method, seconds, ok),
      deleted: (sessionId) => {
        feeds.forget(sessionId);
        hub.forget(sessionId);
        replays?.forget(sessionId);
        running.delete(sessionId);
      },
      rewound: (sessionId, heldSeq) => {
        feeds.rewound(sessionId, heldSeq);
        replays?.rewound(sessionId);
      },
    },
  });
  const server = new HttpServer({
    token,
    host: opts.host,
    port: opts.port,
    allowOrigins: opts.allowOrigins,
    maxSseStreams: opts.maxStreams,
    logger,
    ...(opts.tlsCert && opts.tlsKey ? { tls: { certFile: opts.tlsCert, keyFile: opts.tlsKey } } : {}),
  });
  const transport = server.mountAcp(relay, {
    idleTimeoutMs: opts.connectionIdleMs,
    maxConnections: opts.maxConnections,
    retainConnectionBytes: opts.acpRetainMb * MiB,
    retainTotalBytes: opts.acpRetainTotalMb * MiB,
    maxBufferedTotalBytes: opts.acpUnsentTotalMb * MiB,
  });
  counters.gauges(relay, index, pool, transport, feeds, () => server.sseStats(), server.managementBytes);
  registerManagementRoutes(server, { relay, index, feeds, hub, metrics, version: VERSION, startedAt, turns: { running: (id) => running.get(id) } });
  const inspector = (await import('./inspector/inspector.routes.js')).registerInspector(server, { hub, index, relay, home, env, metrics });
  replays = inspector.replays;
  const listening = await server.listen();
  const state = { pid: process.pid, url: listening.url, version: VERSION, startedAt };
  writeState(home, state);
  const stopKeepingState = keepStateFile(home, state, token, lock, logger);
  // The daemon's one line for a person, with its logs on stderr (daemon.log when started by the CLI).
  writeStderr(`troupe ${VERSION} daemon listening on ${listening.url} (home ${home})\n`);

  keepServingThroughStrayErrors(logger);
  // A log damaged, cut short or written while the daemon was down says something else than its
  // entry: read again in the background, once serving (a stat per log, in slices), so that the list
  // says it before a request opens the session (spec/event-log.md §6, Recheck).
  const recheck = recheckInBackground(index, { isOpen: (id) => relay.sessions.has(id), pause: nextTurn, logger });

  return new Promise<number>((resolve) => {
    let stopping = false;
    let force: NodeJS.Timeout | undefined;
    // The one end of a stop, clean (0) or forced (1): the state file and the lock go with the daemon
    // either way. src/main.ts exits as soon as this resolves: until 2026-12-07 the forced stop
    // resolved 1 before the clean one's `finally`, and daemon.json and daemon.lock were left behind.
    let ended = false;
    const end = (code: number) => {
      if (ended) return;
      ended = true;
      clearTimeout(force);
      stopKeepingState();
      removeState(home, state);
      lock.release();
      resolve(code);
    };
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info('stopping', { signal });
      // Whatever happens, never hang here and never leave a child behind.
      force = setTimeout(() => {
        logger.error('shutdown took too long; killing children', { timeoutMs: shutdownTimeoutMs });
        for (const s of relay.sessions.values()) s.child.proc?.kill();
        end(1);
      }, shutdownTimeoutMs);
      force.unref();
      try {
        const rechecked = recheck.stop();
        await server.close();
        await rechecked;
        await relay.shutdown();
        await index.flush();
        feeds.close();
        inspector.replays.close();
        await spawner.close();
      } catch (err) {
        logger.error('shutdown problem', { error: String(err) });
      } finally {
        end(0);
      }
    };
    signals.serving((signal) => void stop(signal));
  });
}

/** The signals that stop the daemon cleanly (docs/daemon.md §Start and stop). */
type StopSignal = 'SIGTERM' | 'SIGINT' | 'SIGHUP';

interface StopSignals {
  /** The daemon serves: `stop` is called for SIGTERM, SIGINT and SIGHUP from now on, and at once for one that came while it started. */
  serving(stop: (signal: StopSignal) => void): void;
}

/**
 * SIGTERM, SIGINT and SIGHUP, taken from before the daemon takes its lock. One that comes while the
 * daemon starts (a service manager stopping it, Ctrl-C on a slow start) stops it once it serves,
 * cleanly: until 2026-12-07 Node's default action ended it half-started (killed by the signal, its
 * lock left, the pooled children to its spawner). SIGHUP is what a `troupe serve` in a terminal gets
 * when the terminal closes (the kernel, or the shell, signals its foreground process group): it
 * stops the daemon as SIGTERM does, where until 2026-12-07 its default action killed the daemon with
 * its state file and lock left and its children's turns cut off. A SIGTERM or SIGHUP repeated while
 * the daemon stops (a service manager, the standalone reaper, a terminal's shell) must not end it
 * half-way through its clean stop, as Node's default action would: the stop is bounded by its own
 * 30 s (TROUPE_SHUTDOWN_TIMEOUT_MS). A second Ctrl-C does end it at once, by the default action (its spawner then stops its
 * children).
 */
function stopSignals(): StopSignals {
  let stop: ((signal: StopSignal) => void) | undefined;
  let asked: StopSignal | undefined;
  let interrupted = false;
  const onSignal = (signal: StopSignal) => {
    if (signal === 'SIGINT') {
      if (interrupted) {
        process.removeAllListeners('SIGINT');
        process.kill(process.pid, 'SIGINT');
        return;
      }
      interrupted = true;
    }
    if (stop) stop(signal);
    else asked ??= signal;
  };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => onSignal(signal));
  return {
    serving(f) {
      stop = f;
      if (asked) f(asked);
    },
  };
}

/**
 * Lowers a child's priority. The children run in a session of their own (src/actors/child-spawner.ts),
 * and where the kernel schedules each session as a group (autogroup, `kernel.sched_autogroup_enabled`),
 * a nice value weighs only among the processes of its own session: the session's group is given the
 * same nice (proc(5), /proc/PID/autogroup), so that the children weigh against the daemon as
 * `--child-nice` says. Where there is no autogroup, the file is missing or refuses the write: the
 * process's own nice is all there is.
 */
function niceChild(pid: number, nice: number): void {
  setPriority(pid, nice);
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(nice));
  } catch {
    // No autogroup here (or not ours to set): the process nice above stands.
  }
}
