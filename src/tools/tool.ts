/** The shape every built-in tool has, and the environment the workspace host gives it. */
import type { ToolContent, ToolKind, ToolLocation } from '../core/events.js';
import { TroupeError } from '../core/errors.js';
import type { ToolDescription, ToolResult, ToolRunContext } from '../core/ports.js';
import type { ToolSpec } from '../core/provider.js';
import type { CommandBackend, FileBackend } from './backends.js';
import type { ObjectSchema } from './input-schema.js';
import { stat } from 'node:fs/promises';
import { notUtf8NameError } from './non-utf8-names.js';
import type { GuardedPath, PathGuard } from './path-guard.js';
import { headOf, pairSafeEnd } from '../core/text-cut.js';
import { oneLine } from '../core/one-line.js';

/** Every bound the tools enforce. All sizes in bytes, all times in milliseconds. */
export interface ToolLimits {
  /** read_file: lines returned when no `limit` is given. */
  readDefaultLines: number;
  /** read_file: the most text returned by one call (longer output is cut with a marker). */
  readMaxBytes: number;
  /** read_file / edit_file: refuse local files larger than this. */
  maxFileBytes: number;
  /** list_dir: the most entries listed. */
  listMaxEntries: number;
  /** glob / grep: default and hard maximum of `max_results`. */
  searchDefaultResults: number;
  searchMaxResults: number;
  /** glob / grep: the most directory entries examined by one call. */
  searchMaxEntries: number;
  /** grep: files larger than this are skipped. */
  grepMaxFileBytes: number;
  /** grep: matched lines are cut to this many characters. */
  grepMaxLineChars: number;
  /** grep: the whole search stops with `tool_timeout` after this long (a regex can backtrack for ever). */
  grepTimeoutMs: number;
  /** run_command: default and maximum `timeout_ms`. */
  commandTimeoutMs: number;
  commandMaxTimeoutMs: number;
  /** run_command: combined output kept (head and tail). */
  commandOutputBytes: number;
}

export const DEFAULT_LIMITS: ToolLimits = {
  readDefaultLines: 2000,
  readMaxBytes: 256 * 1024,
  maxFileBytes: 10 * 1024 * 1024,
  listMaxEntries: 1000,
  searchDefaultResults: 200,
  searchMaxResults: 2000,
  searchMaxEntries: 100_000,
  grepMaxFileBytes: 1024 * 1024,
  grepMaxLineChars: 400,
  grepTimeoutMs: 60_000,
  commandTimeoutMs: 120_000,
  commandMaxTimeoutMs: 600_000,
  commandOutputBytes: 64 * 1024,
};

export interface ToolEnv {
  guard: PathGuard;
  files: FileBackend;
  commands: CommandBackend;
  limits: ToolLimits;
}

/** A built-in tool. `Input` is what its schema admits; the host validates before calling. */
export interface ToolDefinition<Input = Record<string, unknown>> {
  name: string;
  description: string;
  schema: ObjectSchema;
  kind: ToolKind;
  access: ToolDescription['access'];
  /** Checks beyond the schema (e.g. a regex that does not compile); throws `invalid_params`. */
  check?(input: Input, env: ToolEnv): void;
  /** Title and locations, without touching the file system. */
  describe(input: Input, env: ToolEnv): { title: string; locations: ToolLocation[] };
  /** Runs; throws TroupeError (or a Node errno error) for failures the host reports to the model. */
  run(input: Input, env: ToolEnv, ctx: ToolRunContext): Promise<ToolResult>;
  /** What `run` would change (a diff), computed without changing anything; throws as `run` would. */
  preview?(input: Input, env: ToolEnv, signal: AbortSignal): Promise<ToolContent[]>;
}

/** Erases the input type so that tools with different inputs fit in one table. */
export function defineTool<Input>(tool: ToolDefinition<Input>): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

export function specOf(tool: ToolDefinition): ToolSpec {
  return { name: tool.name, description: tool.description, inputSchema: tool.schema as unknown as Record<string, unknown> };
}

/** The `code` of a node:fs error (`ENOENT`, …), if it has one. */
export function errnoOf(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}

/** `code`-carrying errors from node:fs, made into messages a model can act on. */
export function fileError(err: unknown, shown: string): TroupeError {
  if (err instanceof TroupeError) return err;
  const code = errnoOf(err);
  if (code === 'ENAMETOOLONG') return pathTooLongError(shown);
  const reasons: Record<string, string> = {
    ENOENT: `File not found: ${shown}`,
    EISDIR: `${shown} is a directory, not a file (use list_dir).`,
    ENOTDIR: `A component of ${shown} is not a directory.`,
    EACCES: `Permission denied: ${shown}`,
    EPERM: `Operation not permitted: ${shown}`,
    ELOOP: `Cannot resolve ${shown}: too many levels of symbolic links (a symlink loop).`,
  };
  const message = (code && reasons[code]) ?? `${shown}: ${err instanceof Error ? err.message : String(err)}`;
  return new TroupeError('tool_failed', message, { path: shown, ...(code ? { errno: code } : {}) });
}

/** A path in a message about its length: the start of a long one, not its thousands of characters. */
export function abbreviatedPath(shown: string): string {
  if (shown.length <= 80) return shown;
  return `${shown.slice(0, pairSafeEnd(shown, 60))}… (${shown.length} characters)`;
}

/**
 * The error for a path the file system refuses as too long (ENAMETOOLONG); `why` says which part,
 * when known. Until 2026-12-06 the system's own message came through ("ENAMETOOLONG: name too long,
 * realpath '…'"), repeating a path of thousands of characters.
 */
export function pathTooLongError(shown: string, why = 'the path (its symbolic links followed), or one of its names, is longer than the file system allows'): TroupeError {
  const short = abbreviatedPath(shown);
  return new TroupeError('tool_failed', `Cannot use ${short}: ${why} (ENAMETOOLONG). Use a shorter path.`, { path: short, errno: 'ENAMETOOLONG' });
}

/** The error for a FIFO, socket or device file, which the file tools never open. */
export function notRegularFile(shown: string): TroupeError {
  return new TroupeError('tool_failed', `${shown} is not a regular file (a FIFO, socket or device); the file tools only read and write regular files.`, { path: shown });
}

/** The size of the file at a guarded path, refused with a model-readable error if it is missing, a directory or not a regular file. */
export async function fileSize(target: GuardedPath, shown: string): Promise<number> {
  if (!target.exists) throw (await notUtf8NameError(target.path, shown)) ?? fileError(Object.assign(new Error('missing'), { code: 'ENOENT' }), shown);
  const info = await stat(target.path).catch((err: unknown) => {
    throw fileError(err, shown);
  });
  if (info.isDirectory()) throw fileError(Object.assign(new Error('dir'), { code: 'EISDIR' }), shown);
  // Opening a FIFO blocks until a peer opens the other end (forever, and uncancellably: the open
  // holds a libuv thread), and a device can be endless: only regular files are read or written.
  if (!info.isFile()) throw notRegularFile(shown);
  return info.size;
}

/**
 * The longest path a tool takes (Linux's PATH_MAX). Longer is never a real file, and a runaway one
 * (a model repeating itself) was shown whole in the call's title and locations: past the log's
 * 1 MiB event limit that failed the turn (event_too_large) instead of the call, which the model reads.
 */
export const MAX_PATH_LENGTH = 4096;

/** A tool's path parameter: a non-empty string of at most MAX_PATH_LENGTH characters. */
export const pathProperty = (description: string) => ({ type: 'string', minLength: 1, maxLength: MAX_PATH_LENGTH, description }) as const;

/** A successful text result. No `content`: the client is shown the output (the port's default). */
export function textResult(output: string, extra: Partial<ToolResult> = {}): ToolResult {
  return { output, isError: false, ...extra };
}

/**
 * The model's words (a command, a pattern) as a tool call's title shows them: their first line as one
 * line of printable text, as a session's title is (core/one-line.ts: control characters and bidi
 * overrides a space, runs of whitespace one), at most `max` UTF-16 units and `…` when cut or when more
 * lines follow, never half of a surrogate pair. Until 2026-12-07 only the line was cut: an ESC, a CR,
 * a C1 control or a bidi override in a command reached the editor raw in its title.
 */
export function titleText(text: string, max = 60): string {
  const end = text.indexOf('\n');
  const line = oneLine(end === -1 ? text : text.slice(0, end));
  return line.length <= max && end === -1 ? line : `${headOf(line, max)}…`;
}
