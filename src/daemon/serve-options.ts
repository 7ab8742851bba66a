/**
 * The options of `troupe serve` (docs/daemon.md), defined and checked in this one place: by `troupe
 * serve` itself, and by `troupe daemon start`, which passes them on to the `serve` it starts and so
 * refuses a mistake before anything is started (src/cli/daemon.command.ts). Kept free of the
 * daemon's own code (uWS, the relay): the CLI loads it.
 */
import { parseArgs } from 'node:util';
import { decimalInteger, parseArgsProblem, MAX_TIMER_MS, type ArgsOptions } from '../core/option-values.js';
import { DEFAULT_CHILD_SPEC } from '../machines/restart-window.js';
import { DEFAULT_STARTUP_TIMEOUT_MS } from '../actors/child-watchdog.js';
import { DEFAULT_MAX_SSE_STREAMS } from './http/sse-stream.js';
import { allowedOrigin } from './http/security.js';

/**
 * What the live queues of all watchers may hold together (`troupe serve --feed-queue-mb`): 8 MiB
 * each for up to `--max-streams` (256) streams was 2 GiB. At it, the queue holding most overflows as
 * one over FEED_QUEUE (session-feeds.ts) does, and its stream goes on from the log.
 */
export const DEFAULT_FEED_BUDGET_BYTES = 64 * 1024 * 1024;

/** Counts (sessions, connections, streams, restarts): beyond this they mean "no limit" anyway. */
const MAX_COUNT = 1_000_000_000;
export const MiB = 1024 * 1024;
/** Memory budgets in MiB: up to 1 TiB, so that their bytes stay exact integers. */
const MAX_MIB = 1_048_576;

export const SERVE_OPTIONS = {
  host: { type: 'string', default: '127.0.0.1' },
  port: { type: 'string', default: '7433' },
  'allow-origin': { type: 'string', multiple: true, default: [] },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  pool: { type: 'string', default: '2' },
  'max-sessions': { type: 'string', default: '1000' },
  'idle-ms': { type: 'string', default: '600000' },
  'child-memory-mb': { type: 'string', default: '512' },
  'child-nice': { type: 'string', default: '0' },
  'heartbeat-ms': { type: 'string', default: '1000' },
  'heartbeat-timeout-ms': { type: 'string', default: '10000' },
  'startup-timeout-ms': { type: 'string', default: String(DEFAULT_STARTUP_TIMEOUT_MS) },
  'restart-intensity': { type: 'string', default: String(DEFAULT_CHILD_SPEC.intensity) },
  'restart-period-ms': { type: 'string', default: String(DEFAULT_CHILD_SPEC.periodMs) },
  'connection-idle-ms': { type: 'string', default: '300000' },
  'max-connections': { type: 'string', default: '256' },
  'max-streams': { type: 'string', default: String(DEFAULT_MAX_SSE_STREAMS) },
  'feed-queue-mb': { type: 'string', default: String(DEFAULT_FEED_BUDGET_BYTES / MiB) },
  'acp-retain-mb': { type: 'string', default: '64' },
  'acp-retain-total-mb': { type: 'string', default: '256' },
  'acp-unsent-total-mb': { type: 'string', default: '1024' },
  snapshot: { type: 'boolean', default: false },
} as const satisfies ArgsOptions;

/**
 * The same options without their defaults, for a command that takes them to pass on (`troupe daemon
 * start`): only those given are read there, and passed on as given.
 */
const SERVE_FLAGS = Object.fromEntries(Object.entries(SERVE_OPTIONS as ArgsOptions).map(([name, { default: _, ...option }]) => [name, option])) as {
  [K in keyof typeof SERVE_OPTIONS]: Omit<(typeof SERVE_OPTIONS)[K], 'default'>;
};

/** What `troupe serve` runs with, every option read and checked. */
export interface ServeOptions {
  host: string;
  port: number;
  allowOrigins: string[];
  tlsCert?: string;
  tlsKey?: string;
  pool: number;
  maxSessions: number;
  idleMs: number;
  memory: number;
  childNice: number;
  heartbeatMs: number;
  heartbeatTimeoutMs: number;
  startupTimeoutMs: number;
  intensity: number;
  periodMs: number;
  connectionIdleMs: number;
  maxConnections: number;
  maxStreams: number;
  feedQueueMb: number;
  acpRetainMb: number;
  acpRetainTotalMb: number;
  acpUnsentTotalMb: number;
  snapshot: boolean;
}

/** A usage mistake in serve's options, in one line (its caller names the command and exits 2). */
export class ServeUsageError extends Error {}

/**
 * Reads `args` as `troupe serve` does, or throws a ServeUsageError. Every number is read and checked
 * here, before any lock is taken or process started: a mistake is a usage error (exit 2), never a
 * daemon on another port than asked (uWS takes a port modulo 65536).
 */
export function readServeOptions(args: string[]): ServeOptions {
  let opts;
  try {
    opts = parseArgs({ args, options: SERVE_OPTIONS, strict: true }).values;
  } catch (err) {
    throw new ServeUsageError(parseArgsProblem(err, args, SERVE_OPTIONS));
  }
  const num = (name: keyof typeof opts, min: number, max: number): number => {
    const raw = String(opts[name]);
    const n = decimalInteger(raw);
    if (n === undefined || n < min || n > max) throw new ServeUsageError(`--${name} must be an integer from ${min} to ${max}, got '${raw}'`);
    return n;
  };
  const numbers = {
    port: num('port', 0, 65_535),
    pool: num('pool', 0, 1_000),
    maxSessions: num('max-sessions', 1, MAX_COUNT),
    idleMs: num('idle-ms', 1, MAX_TIMER_MS),
    memory: num('child-memory-mb', 16, 1_048_576),
    childNice: num('child-nice', 0, 19),
    heartbeatMs: num('heartbeat-ms', 10, MAX_TIMER_MS),
    heartbeatTimeoutMs: num('heartbeat-timeout-ms', 50, MAX_TIMER_MS),
    startupTimeoutMs: num('startup-timeout-ms', 100, MAX_TIMER_MS),
    intensity: num('restart-intensity', 0, MAX_COUNT),
    periodMs: num('restart-period-ms', 1, MAX_TIMER_MS),
    connectionIdleMs: num('connection-idle-ms', 1, MAX_TIMER_MS),
    maxConnections: num('max-connections', 1, MAX_COUNT),
    maxStreams: num('max-streams', 1, MAX_COUNT),
    feedQueueMb: num('feed-queue-mb', 1, MAX_MIB),
    acpRetainMb: num('acp-retain-mb', 0, MAX_MIB),
    acpRetainTotalMb: num('acp-retain-total-mb', 0, MAX_MIB),
    acpUnsentTotalMb: num('acp-unsent-total-mb', 1, MAX_MIB),
  };
  if (numbers.heartbeatTimeoutMs < 3 * numbers.heartbeatMs) {
    throw new ServeUsageError(`--heartbeat-timeout-ms (${numbers.heartbeatTimeoutMs}) must be at least three heartbeats (--heartbeat-ms ${numbers.heartbeatMs})`);
  }
  if (Boolean(opts['tls-cert']) !== Boolean(opts['tls-key'])) throw new ServeUsageError('--tls-cert and --tls-key go together');
  // An empty --host (`--host "$HOST"` with HOST unset) is no address: uWS binds every interface for
  // it, and the URL written for clients, `http://:PORT`, leads nowhere (until 2026-12-07).
  if (opts.host.trim() === '') throw new ServeUsageError(`--host needs an address (127.0.0.1, or 0.0.0.0 for every interface), got '${opts.host}'`);
  let allowOrigins: string[];
  try {
    allowOrigins = opts['allow-origin'].map(allowedOrigin);
  } catch (err) {
    throw new ServeUsageError((err as Error).message);
  }
  return { ...numbers, snapshot: opts.snapshot, host: opts.host, allowOrigins, tlsCert: opts['tls-cert'], tlsKey: opts['tls-key'] };
}

/**
 * serve's options as `troupe daemon start` takes them (src/cli/daemon.command.ts ServeOptionReader,
 * given it by src/main.ts): their table, and the usage mistake in `args` as serve reads them.
 */
export const serveOptionReader = {
  flags: SERVE_FLAGS as ArgsOptions,
  problem(args: string[]): string | undefined {
    try {
      readServeOptions(args);
      return undefined;
    } catch (err) {
      if (err instanceof ServeUsageError) return err.message;
      throw err;
    }
  },
};
