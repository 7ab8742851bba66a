/**
 * The one Logger implementation: single lines on stderr (stdout belongs to protocols and command
 * output). The level comes from TROUPE_LOG: error, warn (default), info or debug.
 */
import { readableStack } from './bundled-stack.js';
import type { LogFields, Logger } from './ports.js';

const LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LEVELS)[number];

export function logLevelFrom(env: NodeJS.ProcessEnv): LogLevel {
  const wanted = (env.TROUPE_LOG ?? 'warn').toLowerCase();
  return (LEVELS as readonly string[]).includes(wanted) ? (wanted as LogLevel) : 'warn';
}

function render(fields: LogFields | undefined): string {
  if (!fields) return '';
  try {
    // A stack (an Error's, or a field named so) of the bundled agent is mapped to its source (bundled-stack.ts).
    return ' ' + JSON.stringify(fields, (k, v) => (v instanceof Error ? { message: v.message, stack: v.stack && readableStack(v.stack) } : k === 'stack' && typeof v === 'string' ? readableStack(v) : v));
  } catch {
    return ' [unserializable fields]';
  }
}

/** Set once stderr failed (EPIPE: whoever read it, a terminal or a pipe, is gone): logs are dropped from then on. */
let stderrGone = false;
let watching = false;

/**
 * Listens for stderr's failure (once per process). Its 'error' unheard is an uncaught exception,
 * which the last resort (below) logs to the same stderr, failing again: a daemon whose terminal had
 * closed spun at 100% CPU on that loop for good, and no longer stopped on SIGTERM.
 */
function watchStderr(): void {
  if (watching) return;
  watching = true;
  process.stderr.on('error', () => (stderrGone = true));
}

/** Writes to stderr, or drops the text once stderr has failed. */
export function writeStderr(text: string): void {
  watchStderr();
  if (!stderrGone) process.stderr.write(text);
}

export function createStderrLogger(name: string, level: LogLevel, write: (line: string) => void = writeStderr): Logger {
  if (write === writeStderr) watchStderr();
  const max = LEVELS.indexOf(level);
  const at = (lvl: LogLevel) => (msg: string, fields?: LogFields) => {
    if (LEVELS.indexOf(lvl) <= max) write(`${new Date().toISOString()} ${lvl.padEnd(5)} ${name}: ${msg}${render(fields)}\n`);
  };
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
}

/**
 * The last resort of a process that serves many sessions (the daemon, `troupe acp` with an editor's
 * sessions): an error nothing caught (a bug: a promise's failure nobody observed, a throw in a
 * callback) is logged, and the process goes on serving the others, where Node's default would end
 * them all. What the error interrupted is answered by its own path (timeouts, the session's error
 * listener); this only keeps the rest alive.
 */
export function keepServingThroughStrayErrors(logger: Logger): void {
  process.on('unhandledRejection', (err) => logger.error('unhandled rejection (still serving)', { error: String(err), ...(err instanceof Error ? { stack: err.stack } : {}) }));
  process.on('uncaughtException', (err) => logger.error('uncaught exception (still serving)', { error: String(err), stack: err.stack }));
}
