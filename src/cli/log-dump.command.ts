/**
 * `troupe log dump <session-id | file> [--json]`: prints a session log, for people (one line per
 * event) or as JSON lines (one event per line, exactly as stored). Reads the file without
 * modifying it, so it is safe on the log of a running session. Damage is reported on stderr.
 */
import { existsSync } from 'node:fs';
import type { AgentEvent } from '../core/events.js';
import { TroupeError } from '../core/errors.js';
import { isValidSessionId } from '../core/ids.js';
import { readLogFile } from '../store/log-file.reader.js';
import { resolveTroupeHome, sessionLogPath, sessionsDir } from '../store/paths.js';
import { noExtraPositionals, parseCommandArgs, requirePositional } from './args.js';
import { EXIT, reportError } from './cli-io.js';
import { logReadFailed } from './file-read-failed.js';
import { printable } from './terminal-text.js';

export interface LogDumpIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}

const USAGE = `Usage: troupe log dump <session-id | file> [--json] [--no-color]

Prints a session log: one line per event, or with --json one JSON event per line.
A session id is looked up under the state directory ($TROUPE_HOME/sessions/<id>.log).
No daemon is needed, and the file is only read (safe on the log of a running session).

Examples:
  troupe log dump ses_0abc…
  troupe log dump ses_0abc… --json | jq -c 'select(.type == "tool_call_started")'
`;

const SUMMARY_WIDTH = 160;

function summary(e: AgentEvent): string {
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(e)) if (k !== 'seq' && k !== 'ts' && k !== 'sessionId' && k !== 'type') rest[k] = v;
  const text = JSON.stringify(rest);
  return text.length > SUMMARY_WIDTH ? text.slice(0, SUMMARY_WIDTH - 1) + '…' : text;
}

/**
 * One event as a line. Its fields are the session's text (a model's output, a path): JSON escapes C0
 * control characters but not DEL or C1 (U+009B is a CSI to some terminals), so the line is spelled
 * out as the other commands' output is (until 2026-12-06 it was not).
 */
function humanLine(e: AgentEvent): string {
  return `${printable(`${String(e.seq).padStart(8)}  ${new Date(e.ts).toISOString()}  ${String(e.type).padEnd(22)} ${summary(e)}`)}\n`;
}

/** Writes `chunks` honouring backpressure, so that dumping a large log to a pipe does not buffer it all. */
async function writeAll(out: NodeJS.WritableStream, lines: Iterable<string>): Promise<void> {
  let buf = '';
  for (const line of lines) {
    buf += line;
    if (buf.length >= 64 * 1024) {
      if (!out.write(buf)) await new Promise<void>((r) => out.once('drain', () => r()));
      buf = '';
    }
  }
  if (buf.length > 0 && !out.write(buf)) await new Promise<void>((r) => out.once('drain', () => r()));
}

function resolveTarget(target: string, env: NodeJS.ProcessEnv): string {
  if (target.includes('/') || target.endsWith('.log') || existsSync(target) || !isValidSessionId(target)) return target;
  return sessionLogPath(sessionsDir(resolveTroupeHome(env)), target);
}

/**
 * Why `path` could not be read, with its code: every error line ends with one (docs/cli.md); until
 * 2026-12-06 "no log at" a file, "is a directory", "is not a troupe log" and a file that cannot be
 * read (EACCES, EIO) had none.
 * `sessionId`: the session id the path was made from (an unknown session, as for every command).
 */
function unreadable(err: unknown, path: string, sessionId: string | undefined): unknown {
  const errno = (err as NodeJS.ErrnoException).code;
  if (errno === 'ENOENT' || errno === 'ENOTDIR') {
    return sessionId !== undefined ? new TroupeError('session_not_found', `no log at ${path}`, { sessionId }) : new TroupeError('invalid_params', `no log at ${path}`, { path });
  }
  if (errno === 'EISDIR') return new TroupeError('invalid_params', `${path} is a directory`, { path });
  // Any other system error (EACCES, EPERM, EIO, ELOOP…): the file is there but cannot be read. Until
  // 2026-12-06 these were Node's words alone ("EACCES: permission denied, open '…'"), with no code.
  return logReadFailed(path, err) ?? err;
}

export async function logDumpCommand(args: string[], io: LogDumpIo): Promise<number> {
  const rest = args[0] === 'dump' ? args.slice(1) : args;
  let json: boolean;
  let target: string;
  try {
    const { values, positionals } = parseCommandArgs('log dump', rest, { json: { type: 'boolean' } });
    if (values.help) return void io.stdout.write(USAGE), EXIT.ok;
    target = requirePositional('log dump', positionals, 0, 'the session id or log file');
    noExtraPositionals('log dump', positionals, 1);
    json = values.json ?? false;
  } catch (err) {
    return reportError(io, 'log dump', err);
  }
  const path = resolveTarget(target, io.env);
  // A session id (not a file name) that has no log is an unknown session.
  const bySessionId = path !== target;
  let contents;
  try {
    contents = await readLogFile(path);
  } catch (err) {
    return reportError(io, 'log dump', unreadable(err, path, bySessionId ? target : undefined));
  }
  const { scan, events } = contents;
  // No header: what the daemon would refuse to open as log_corrupt (or a file that is no log at all).
  // One line, as every error is: until 2026-12-07 a warning that the whole file "is not part of the
  // log" came first.
  if (!scan.header) return reportError(io, 'log dump', new TroupeError('log_corrupt', `${path} is not a troupe log`, { path }));
  for (const w of scan.warnings) io.stderr.write(`warning: ${printable(w.message)}\n`);
  if (json) {
    await writeAll(io.stdout, (function* () {
      for (const e of events) yield JSON.stringify(e) + '\n';
    })());
    return 0;
  }
  const h = scan.header;
  const range = events.length > 0 ? `seq ${events[0]!.seq}–${events[events.length - 1]!.seq}` : 'no events';
  const lines = [`# session ${printable(h.sessionId)}, log created ${new Date(h.createdAt).toISOString()}, ${events.length} events (${range})\n`];
  if (h.tombstone) lines.push(`# deleted ${new Date(h.tombstone.deletedAt).toISOString()} (cwd ${printable(h.tombstone.cwd)}); only the tombstone remains\n`);
  else if (h.baseSeq > 0) lines.push(`# this file starts after seq ${h.baseSeq}\n`);
  await writeAll(io.stdout, lines);
  await writeAll(io.stdout, (function* () {
    for (const e of events) yield humanLine(e);
  })());
  return 0;
}
