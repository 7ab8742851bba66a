/**
 * What every command receives (streams and environment, so tests and the dispatcher agree), the
 * documented exit codes, and the one-line error report (docs/cli.md §Exit codes).
 */
import { isTroupeError } from '../core/errors.js';
import { printable } from './terminal-text.js';

/** Streams and environment of one CLI invocation. */
export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  stdin?: NodeJS.ReadableStream;
}

/** Exit codes, documented in docs/cli.md. */
export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  cancelled: 130,
} as const;

/** The CLI's own error codes, in the order of spec/errors.md §The CLI's own codes (a test compares them). */
export const CLI_ERROR_CODES = ['usage', 'daemon_unreachable', 'daemon_start_failed', 'daemon_version_mismatch', 'not_a_tty', 'replay_gap', 'browser_failed', 'daemon_state_lost', 'prompt_too_large', 'output_failed'] as const;

/**
 * A failure local to the CLI that has no entry in the shared error table (the daemon cannot be
 * reached, a usage mistake). `code` is stable and shown in the error line.
 */
export class CliError extends Error {
  constructor(
    readonly code: (typeof CLI_ERROR_CODES)[number],
    message: string,
    readonly exitCode: number = code === 'usage' ? EXIT.usage : EXIT.error,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Set once stdout is gone (a closed pipe): the command winds down without saying anything. */
export const shuttingDown = { value: false };

/**
 * What must still happen when stdout closes (`troupe run … | head`) and the process leaves at once:
 * `run` cancels its turn there, which no one would see the end of.
 */
export const beforeHastyExit = new Set<() => Promise<unknown>>();

/**
 * No one reads stdout any more (a write failed with EPIPE, or its pipe's reader went away: see
 * stdout-reader.ts): the command stops quietly, as Unix tools do, exit 0, after what
 * `beforeHastyExit` holds (bounded to 2 s: the daemon may be gone) and stopping a standalone daemon.
 * `exitCode`: 1 for output that failed otherwise (a full disk), said by the caller.
 */
export function leaveQuietly(exitCode: number = EXIT.ok): void {
  if (shuttingDown.value) return;
  shuttingDown.value = true;
  // A command that has returned already had its code set as the process's (src/main.ts).
  if (exitCode !== EXIT.ok) process.exitCode = exitCode;
  const pending = Promise.all([...beforeHastyExit].map((f) => f().catch(() => undefined)));
  void Promise.race([pending, new Promise((r) => setTimeout(r, 2_000).unref())])
    .then(() => import('./standalone-daemon.js'))
    .then((m) => m.stopStandaloneDaemons())
    .finally(() => process.exit(exitCode));
}

/**
 * Until the returned function is called: terminated (SIGTERM, as from `timeout 600 troupe run …`, or
 * SIGHUP from a closed terminal), the command first runs `cancel` (for at most 2 s), then dies of the
 * signal as it would have. As on Ctrl-C: the agent must not go on alone with a turn no one follows.
 */
export function cancelOnTermination(cancel: () => Promise<unknown> | undefined): () => void {
  const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGHUP'];
  const remove = () => {
    for (const s of signals) process.removeListener(s, onTerminate);
  };
  const onTerminate = (signal: NodeJS.Signals) => {
    remove();
    shuttingDown.value = true;
    const cancelled = Promise.resolve(cancel()).catch(() => undefined);
    void Promise.race([cancelled, new Promise((r) => setTimeout(r, 2_000).unref())]).finally(() => process.kill(process.pid, signal));
  };
  for (const s of signals) process.once(s, onTerminate);
  return remove;
}

/** Writes one line for `err` (a stack only with TROUPE_LOG=debug) and returns the exit code. */
export function reportError(io: CliIo, command: string, err: unknown): number {
  if (shuttingDown.value) return EXIT.ok;
  const debug = io.env.TROUPE_LOG === 'debug';
  let code: string | undefined;
  let exit: number = EXIT.error;
  if (err instanceof CliError) {
    code = err.code;
    exit = err.exitCode;
  } else if (isTroupeError(err)) {
    code = err.code;
  }
  // A message can quote untrusted text (a vendor's error body, a path): spelled out, as on stdout.
  let message = printable((err instanceof Error ? err.message : String(err)).split('\n')[0]!);
  // A failed session runs nothing until revived: every command that meets one says how (until
  // 2026-12-07 only cancel and steer did; run --session, chat --session and attach did not).
  const failed = isTroupeError(err, 'session_failed') ? err.data.sessionId : undefined;
  if (typeof failed === 'string') message += `: 'troupe sessions revive ${printable(failed)}' once its cause is fixed`;
  io.stderr.write(`troupe ${command}: ${message}${code && code !== 'usage' ? ` (${code})` : ''}\n`);
  if (debug && err instanceof Error) {
    if (err.stack) io.stderr.write(`${err.stack}\n`);
    // The technical cause a plain line leaves out (the daemon went away: the transport's own words).
    // A cause may be anything thrown, null too: the chain ends at one that has no fields to read.
    for (let c = err.cause, depth = 0; c !== undefined && c !== null && depth < 4; c = (c as { cause?: unknown }).cause, depth++) {
      const code = (c as { code?: unknown }).code;
      io.stderr.write(`caused by: ${c instanceof Error ? `${c.name}: ${c.message}` : String(c)}${typeof code === 'string' ? ` (${code})` : ''}\n`);
    }
  }
  return exit;
}
