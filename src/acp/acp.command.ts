/**
 * `troupe acp`: the ACP agent on stdio. stdout carries the protocol and nothing else; every log
 * goes to stderr (level from TROUPE_LOG). Ends when stdin closes (once every request read has
 * been answered, its turns cancelled) or on SIGTERM/SIGINT/SIGHUP, after cancelling running turns and
 * flushing every session log.
 */
import { Readable } from 'node:stream';
import { format } from 'node:util';
import * as acp from '@agentclientprotocol/sdk';
import { isTroupeError, TroupeError } from '../core/errors.js';
import { msFromEnv } from '../core/option-values.js';
import type { Logger } from '../core/ports.js';
import { createStderrLogger, keepServingThroughStrayErrors, logLevelFrom, writeStderr } from '../core/stderr-logger.js';
import { loadConfig, type TroupeConfig } from '../providers/config.js';
import { defaultModelWarning } from '../providers/registry.js';
import { resolveTroupeHome, sessionsDir } from '../store/paths.js';
import { privateHome } from '../store/private-modes.js';
import { writePendingLogs } from '../store/unwritten-logs.js';
import { createAgentApp } from './agent.app.js';
import type { SessionHost } from './session-host.js';
import { batchedStdout } from './batched-stdout.js';
import { requestGate } from './request-gate.js';
import { boundedLines } from './oversized-lines.js';
import { MAX_LINE_BYTES } from '../wire/ndjson-limits.js';
import { POOL_INITIALIZE_ID } from '../wire/control-messages.js';

/** `startup`: how the process was started (bin/troupe.js, src/acp/agent-script.ts), logged at debug. */
export async function runAcp(args: string[], startup?: Record<string, unknown>): Promise<number> {
  const env = process.env;
  // --help, --version and --check never get here: they print for a person (src/cli/face-info.command.ts).
  const unknown = args.filter((a) => a !== '--supervised');
  if (unknown.length) {
    process.stderr.write(`troupe acp: unknown option ${unknown[0]} (try --help)\n`);
    return 2;
  }

  // Anything a library prints through the console's log, info or debug methods would corrupt the
  // protocol: those go to stderr too, as warn and error do. (The protocol's one writer is `out`.)
  const toStderr = (...a: unknown[]) => writeStderr(format(...a) + '\n');
  Object.assign(console, { log: toStderr, info: toStderr, debug: toStderr });
  const logger = createStderrLogger('troupe acp', logLevelFrom(env));
  if (startup) logger.debug('started', startup);
  // Every session of the editor lives in this process.
  keepServingThroughStrayErrors(logger);

  // A config the agent cannot use still lets it speak the protocol: every request that needs the
  // config (a session's) is answered with its problem, which an editor shows, where an agent that
  // exited at once would only be "the agent stopped" (and, under a daemon, a crash loop).
  let config: TroupeConfig = {};
  let configProblem: unknown;
  try {
    config = loadConfig(env);
  } catch (err) {
    configProblem = err;
    logger.error((err as Error).message);
  }
  // A default model no turn could use refuses each new session (SessionHost.defaultModel), and one
  // whose provider has no key here fails each turn: said at once too, where an editor keeps the
  // agent's log (defaultModelWarning). A daemon's children leave it to the daemon.
  if (!configProblem && !args.includes('--supervised')) {
    try {
      const warning = defaultModelWarning(env, config);
      if (warning) logger.warn(warning);
    } catch (err) {
      logger.warn((err as Error).message);
    }
  }
  // Under a daemon, fd 3 carries heartbeats, durable events and machine transitions to it.
  const channel = args.includes('--supervised') ? (await import('./control-channel.js')).ControlChannel.open(Number(env.TROUPE_HEARTBEAT_MS) || 1000) : undefined;
  // `out` is the protocol's only writer, one write per loop turn: live session/updates and
  // session/load replays reach it directly as text, every other message through the SDK. Before
  // each write it writes the logs' pending events: nothing is sent that is not in a log's file.
  const out = batchedStdout(process.stdout, writePendingLogs);
  // The session machinery is a separate chunk of the bundle, loaded after `initialize` is answered.
  const home = resolveTroupeHome(env);
  // An editor's agent may be the only troupe that opens this home: made private as `troupe serve`
  // makes it (a daemon's children leave it to the daemon). A home it cannot look at is the session
  // store's to say, when a request opens it.
  if (!channel) {
    try {
      privateHome(home, logger);
    } catch (err) {
      logger.debug('cannot check the modes of TROUPE_HOME', { home, error: String(err) });
    }
  }
  let host: Promise<SessionHost> | undefined;
  const openHost = () =>
    (host ??= (configProblem ? Promise.reject(configProblem) : import('./session-host.js')).then(({ SessionHost }) =>
      // A daemon stops a whole child once its session is idle; an editor's agent unloads sessions.
      SessionHost.open({ home, env, config, logger, updateLines: out.lines, ...(channel ? { reporter: channel } : { idleUnloadMs: sessionIdleMs(env, logger) }) }).catch((err: unknown) => {
        // Not kept: the next request tries again, so that a home fixed meanwhile (a full disk
        // freed, a directory made writable) is used without restarting the editor's agent.
        host = undefined;
        throw unusableHome(err, home);
      }),
    ));
  // Stops the sessions and writes out what they sent; once (stdin's end, a signal, stdout's loss).
  let stopping: Promise<void> | undefined;
  const stop = () =>
    // A store that never opened has nothing to shut down (its failure was logged when it happened).
    (stopping ??= (host ?? Promise.resolve(undefined))
      .then((opened) => opened?.shutdown(), () => undefined)
      .catch((err) => err !== configProblem && logger.error('shutdown failed', { error: String(err) }))
      .then(() => out.flush())
      .finally(() => channel?.close()));
  const inputEnded = new AbortController();
  const app = createAgentApp({ openHost, env, config, logger, sessionsDir: sessionsDir(home), writeLines: out.writeLines, supervised: Boolean(channel), inputEnded: inputEnded.signal });
  // The SDK parses stdin; what it answers itself (a line that is not JSON-RPC) goes out through `out`.
  // A line over the message limit never reaches it (it would end the connection): it is answered
  // and the agent reads on (oversized-lines.ts). The SDK's own limit is a byte above, for a CRLF.
  const input = boundedLines(Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>, { answer: out.lines, warn: (message, fields) => logger.warn(message, fields) });
  const stdio = acp.ndJsonStream(out.bytes, input, { maxMessageBytes: MAX_LINE_BYTES + 1 });
  if (channel) {
    // A daemon's child waits in the warm pool before anyone asks it anything: load everything now,
    // then, if still nobody has asked anything, run the session/new and prompt path on a throwaway
    // session (warm-up.ts): its first real session/new and turn then run compiled code. `asked` is a
    // signal, not a flag, so that the warm-up cancels its turn the moment a request arrives.
    const asked = new AbortController();
    // The daemon initializes a pooled child while it waits (spec/daemon.md §Warm pool): that alone
    // is no reason to stop warming up; anything else (a session's own initialize too) means a client
    // is waiting. Once the warm-up is over nothing needs telling, and the listener goes. (Added after
    // the SDK's reader above: a 'data' listener sets stdin flowing.)
    const onRequestData = (chunk: Buffer) => (isPoolInitialize(chunk) ? process.stdin.once('data', onRequestData) : asked.abort());
    process.stdin.once('data', onRequestData);
    void openHost()
      .then(async (h) => {
        // Not before the loop has read stdin once: a child the daemon spawned for a request (the
        // pool was empty) has it waiting there, and opening the host may take no I/O at all.
        await new Promise((resolve) => setImmediate(resolve));
        if (asked.signal.aborted) return void logger.debug('no warm-up', { reason: 'a request came first' });
        // Waiting in the pool, most likely for a session/new: make its log file now.
        h.prepareSpareLog();
        await (await import('./warm-up.js')).warmUp({ env, config, asked: asked.signal, logger });
      })
      .catch((err) => err !== configProblem && logger.error('cannot open the session store or warm up', { error: String(err) }))
      .finally(() => process.stdin.off('data', onRequestData));
  }
  // A request written right behind `initialize`, before its answer, is served after it; every
  // request read before stdin's end is answered before the connection closes, its turns cancelled
  // (request-gate.ts).
  const served = requestGate({ readable: stdio.readable, writable: out.writable }, {
    onEnd: () => {
      logger.debug('stdin ended; answering the requests in flight, turns cancelled');
      inputEnded.abort();
    },
    // Once every request is answered the agent stops, with the connection still open: what it
    // sends until then goes out. First one turn of the loop, in which what the last answer's handler
    // scheduled runs (a new session's commands: agent.app.ts announceCommands).
    beforeClose: async () => {
      await new Promise((resolve) => setImmediate(resolve));
      await stop();
    },
  });
  const connection = app.connect(served);

  // SIGHUP too: the terminal the agent runs in has closed. Its default action killed the agent with
  // its running turns cut off mid-way in their logs (until 2026-12-07). (A daemon's children run in a
  // session apart, their spawner's, out of reach of the daemon's terminal: child-spawner.ts.)
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.once(signal, () => void stop().then(() => process.exit(0)));
  }
  // A client that closed its end of stdout is gone too (an editor that crashed, or quit without
  // ending stdin): the agent stops as at stdin's end, saving what its sessions have, rather than
  // die of the pipe's error.
  const outputGone = out.broken.then((err) => {
    logger.info('stdout is closed; the client is gone, and the agent stops', { error: err.message });
    // Nothing more is read either: an open stdin would keep the process alive.
    process.stdin.destroy();
  });
  await Promise.race([connection.closed.catch(() => undefined), outputGone]);
  // stdin's end closes the connection with the SDK's own reason; anything else broke it (a read error
  // of stdin): say so, since the editor only sees the agent go away.
  const reason = connection.signal.reason as unknown;
  const failed = reason !== undefined && !(reason instanceof Error && reason.message === 'ACP connection closed');
  if (failed) logger.error('the ACP connection failed; the agent stops', { error: reason instanceof Error ? reason.message : String(reason) });
  await stop();
  return failed ? 1 : 0;
}

/**
 * A TROUPE_HOME the agent cannot use (not a directory, not writable, on a full disk) is the
 * environment's problem, not a bug: every session request is refused with it, as with an unusable
 * config file (invalid_params, naming the directory), not as an internal error.
 */
function unusableHome(err: unknown, home: string): unknown {
  const errno = err as NodeJS.ErrnoException;
  if (isTroupeError(err) || typeof errno?.code !== 'string' || typeof errno.syscall !== 'string') return err;
  return new TroupeError('invalid_params', `cannot use the session store ${home} (TROUPE_HOME): ${errno.message}`, { path: home, errno: errno.code });
}

/** Whether a read from stdin is nothing but the pool's `initialize` (POOL_INITIALIZE_ID). */
function isPoolInitialize(chunk: Buffer): boolean {
  const text = chunk.toString('utf8');
  const lines = text.split('\n').filter((l) => l.trim());
  return text.endsWith('\n') && lines.length > 0 && lines.every((l) => {
    try {
      const m = JSON.parse(l) as { id?: unknown; method?: unknown };
      return m.method === 'initialize' && m.id === POOL_INITIALIZE_ID;
    } catch {
      return false;
    }
  });
}

/** Idle time after which an editor's `troupe acp` unloads a session (TROUPE_SESSION_IDLE_MS; 0: never). */
export const DEFAULT_SESSION_IDLE_MS = 15 * 60_000;

/** No timer waits this long (idle sessions are swept every minute at most): up to 10 digits, any is taken. */
const MAX_SESSION_IDLE_MS = 9_999_999_999;

function sessionIdleMs(env: NodeJS.ProcessEnv, logger: Logger): number {
  return msFromEnv(env, 'TROUPE_SESSION_IDLE_MS', {
    otherwise: DEFAULT_SESSION_IDLE_MS,
    min: 0,
    max: MAX_SESSION_IDLE_MS,
    bad: (value) => logger.warn('TROUPE_SESSION_IDLE_MS is not a number of milliseconds; using the default', { value, defaultMs: DEFAULT_SESSION_IDLE_MS }),
  });
}
