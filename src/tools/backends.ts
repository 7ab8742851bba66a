/**
 * The two seams through which the built-in tools touch the outside world. The tools always apply
 * the path guard themselves; a backend only ever receives absolute paths (and a cwd) that already
 * passed it, so a backend never needs to re-check containment.
 *
 * Two implementations exist: the local ones in this folder (node:fs, child_process), and ACP
 * client bridges in src/acp that forward to `fs/read_text_file`, `fs/write_text_file` and
 * `terminal/*` when the client advertises those capabilities (editor buffers are the truth).
 */
import type { ToolRunContext } from '../core/ports.js';

/** Optional line window of a read, with ACP `fs/read_text_file` semantics. */
export interface ReadWindow {
  /** 1-based first line to return. */
  line?: number;
  /** At most this many lines. */
  limit?: number;
  /**
   * At most this many characters (UTF-16 units) of the window: a longer window is cut there. A
   * local read stops once it has them, so that a window of a huge file without line breaks (a
   * database, a minified bundle) is not read into memory whole. ACP has no such field: the client
   * bridge cuts what the client sent.
   */
  maxChars?: number;
  /**
   * Refuse, with {@link FileTooLargeError}, a file of more bytes than this. A local read reads at
   * most this many bytes and one more from the file it opened, whatever a size check before the open
   * said: until 2026-12-06 edit_file and write_file checked the size on the path, then read the whole
   * file, so a file that grew (or was swapped for a bigger one) in between was read in full. A
   * client's read checks the text the client sent.
   */
  maxBytes?: number;
}

/** A read with {@link ReadWindow.maxBytes} found the file larger than that. */
export class FileTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`The file has more than ${maxBytes} bytes.`);
    this.name = 'FileTooLargeError';
  }
}

/**
 * Reads and writes whole text files by absolute path.
 *
 * - `readText` rejects when the file does not exist or cannot be read. A Node `ErrnoException`
 *   (with `code`) is reported to the model precisely; any other error by its message.
 * - `writeText` creates the file if missing and replaces its content otherwise. Parent directories
 *   are created by the tool (inside the workspace) before the call.
 */
export interface FileBackend {
  readText(absPath: string, window: ReadWindow, signal: AbortSignal): Promise<string>;
  writeText(absPath: string, content: string, signal: AbortSignal): Promise<void>;
  /**
   * Whether reads and writes reach an editor's buffers now, rather than the disk (absent: the disk,
   * both). A path with nothing on disk may then be an unsaved buffer (unsaved-buffer.ts), and one the
   * editor reads but does not write cannot be written without making a file on disk beside it.
   */
  editorBuffers?(): { reads: boolean; writes: boolean };
}

/** One shell command to run to completion. */
export interface CommandRequest {
  /** A shell command line (`sh -c` semantics). */
  command: string;
  /** Absolute working directory, already checked by the path guard. */
  cwd: string;
  /** Extra environment variables on top of the agent's environment. */
  env?: Record<string, string>;
  /** Kill the whole process tree after this long. */
  timeoutMs: number;
  /** Keep at most this many bytes of combined stdout+stderr. */
  outputByteLimit: number;
}

export interface CommandOutcome {
  /** Combined stdout and stderr, possibly truncated (with a marker) to `outputByteLimit`. */
  output: string;
  truncated: boolean;
  /** Exit code, or null when the process was ended by a signal. */
  exitCode: number | null;
  /** Name of the signal that ended the process, if any. */
  signal: string | null;
  timedOut: boolean;
  /**
   * Why the command's end or output is not known, though it started: a client terminal whose
   * `terminal/wait_for_exit` or `terminal/output` failed. The command was stopped; `output` is what
   * could be read of it.
   */
  failure?: string;
  /** The code of `failure`: `tool_timeout` when the client did not answer in time, else `tool_failed` (the default). */
  failureCode?: 'tool_failed' | 'tool_timeout';
  /** Set by backends that run the command in a client terminal (already reported via ctx.update). */
  terminalId?: string;
}

/**
 * Runs commands. Contract:
 * - resolves once the command has ended (normally, by timeout, or because `ctx.signal` aborted,
 *   in which case it ends the command promptly and resolves; the tool reports the cancellation);
 * - nothing the command started outlives the call (process group kill, terminal release);
 * - a backend that has something to show while running (an ACP terminal) calls `ctx.update`
 *   as soon as it exists;
 * - rejects only when the command could not be started at all.
 */
export interface CommandBackend {
  run(request: CommandRequest, ctx: ToolRunContext): Promise<CommandOutcome>;
}
