/**
 * `troupe log dump <session-id | file> [--json]`: prints a session log, for people (one line per
 * event) or as JSON lines (one event per line, exactly as stored). Reads the file without
 * modifying it, so it is safe on the log of a running session. Damage is reported on stderr.
 */
import { closeSync, existsSync, fstatSync, openSync } from 'node:fs';
import type { AgentEvent } from '../core/events.js';
import { TroupeError } from '../core/errors.js';
import { HISTORY_PAGE_BYTES } from '../core/ports.js';
import { isValidSessionId } from '../core/ids.js';
import { readEventRangeFd, readLogFile, scanFd, type LogScan } from '../store/log-file.reader.js';
import { resolveTroupeHome, sessionLogPath, sessionsDir } from '../store/paths.js';
import { noExtraPositionals, parseCommandArgs, requirePositional } from './args.js';
import { EXIT, reportError } from './cli-io.js';
import { logReadFailed } from './file-read-failed.js';
import { printable } from './terminal-text.js';
import { headOf } from '../core/text-cut.js';

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
  return text.length > SUMMARY_WIDTH ? `${headOf(text, SUMMARY_WIDTH - 1)}…` : text;
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
    const { values, positionals } = parseCommandArgs('log dump', rest, { json: { type: 'boolean' } }, 'a file name');
    if (values.help) return void io.stdout.write(USAGE), EXIT.ok;
    target = requirePositional('log dump', positionals, 0, 'the session id or log file');
    noExtraPositionals('log dump', positionals, 1);
    json = values.json ?? false;
  } catch (err) {
    return reportError(io, 'log dump', err);
  }
  const path = resolveTarget(target, io.env);
  // A session id (not a file name) that has no log is an unknown session.
  const failed = (err: unknown) => reportError(io, 'log dump', unreadable(err, path, path !== target ? target : undefined));
  let log;
  try {
    log = await openLog(path);
  } catch (err) {
    return failed(err);
  }
  try {
    const { scan, pages } = log;
    // No header: what the daemon would refuse to open as log_corrupt (or a file that is no log at all).
    // One line, as every error is: until 2026-12-07 a warning that the whole file "is not part of the
    // log" came first.
    if (!scan.header) return reportError(io, 'log dump', new TroupeError('log_corrupt', `${path} is not a troupe log`, { path }));
    for (const w of scan.warnings) io.stderr.write(`warning: ${printable(w.message)}\n`);
    const line = json ? (e: AgentEvent) => JSON.stringify(e) + '\n' : humanLine;
    if (!json) {
      const h = scan.header;
      // The scan's seqs: a log's seqs follow one another, each record from the one after the last.
      const count = scan.firstSeq === undefined ? 0 : scan.lastSeq - scan.firstSeq + 1;
      const range = count > 0 ? `seq ${scan.firstSeq}–${scan.lastSeq}` : 'no events';
      const lines = [`# session ${printable(h.sessionId)}, log created ${new Date(h.createdAt).toISOString()}, ${count} events (${range})\n`];
      if (h.tombstone) lines.push(`# deleted ${new Date(h.tombstone.deletedAt).toISOString()} (cwd ${printable(h.tombstone.cwd)}); only the tombstone remains\n`);
      else if (h.baseSeq > 0) lines.push(`# this file starts after seq ${h.baseSeq}\n`);
      await writeAll(io.stdout, lines);
    }
    await writeAll(io.stdout, (function* () {
      for (const page of pages) for (const e of page) yield line(e);
    })());
    return 0;
  } catch (err) {
    // A record that does not decode (log_corrupt) or a read that fails, after what came before it.
    return failed(err);
  } finally {
    log.close();
  }
}

/** Events a page of the dump decodes at most (and HISTORY_PAGE_BYTES of them): all it holds at once. */
const PAGE_EVENTS = 4096;

/**
 * The log at `path`: its scan, and its events a page at a time. A file is scanned (frames and
 * checksums: nothing decoded, nothing kept) and then decoded a page at a time through the one
 * descriptor (the file it was opened on, even if a deletion puts a tombstone in its place), so that a
 * log of any size is dumped in the memory of a page: until 2026-12-07 the whole file was read into
 * memory and all its events decoded at once (930 MB for a log of 420 MB), and a log of over 2 GiB
 * could not be dumped (`ERR_FS_FILE_TOO_LARGE`). Anything else (a pipe, and files of /proc, whose
 * size is 0) has no size to scan to: read whole, as before.
 */
async function openLog(path: string): Promise<{ scan: LogScan; pages: Iterable<AgentEvent[]>; close(): void }> {
  const fd = openSync(path, 'r');
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size === 0) {
      closeSync(fd);
      const { scan, events } = await readLogFile(path);
      return { scan, pages: [events], close() {} };
    }
    const scan = scanFd(fd, path);
    return { scan, pages: pagesOf(fd, path, scan), close: () => closeSync(fd) };
  } catch (err) {
    try {
      closeSync(fd);
    } catch {
      // Closed above, before reading the file whole.
    }
    throw err;
  }
}

function* pagesOf(fd: number, path: string, scan: LogScan): Iterable<AgentEvent[]> {
  for (let after = scan.firstSeq === undefined ? scan.lastSeq : scan.firstSeq - 1; after < scan.lastSeq; ) {
    const page = readEventRangeFd(fd, path, scan.checkpoints, after, PAGE_EVENTS, scan.validBytes, HISTORY_PAGE_BYTES);
    if (page.length === 0) return;
    yield page;
    after = page[page.length - 1]!.seq;
  }
}
