/**
 * `troupe watch ID [--after N] [--json]`: tails a session's event log by cursor through the
 * management API (`/v1/sessions/:id/events?after=N`), replaying what came after N and then following
 * live. A replay gap (the events after the cursor are gone) ends the command with a clear error.
 */
import { ContentJoiner, type PartedMessage } from '../core/content-parts.js';
import { ERROR_CODES, isTroupeError, TroupeError, type ErrorCode } from '../core/errors.js';
import type { EventOf } from '../core/events.js';
import { intOption, noExtraPositionals, parseCommandArgs, requirePositional } from './args.js';
import { CliError, EXIT, leaveQuietly, reportError, type CliIo } from './cli-io.js';
import { DaemonClient, DaemonGoneError } from './daemon.client.js';
import { connectDaemon } from './daemon-target.js';
import { onStdoutReaderGone } from './stdout-reader.js';
import { makeStyle, type Style } from './style.js';
import { printable } from './terminal-text.js';

const USAGE = `Usage: troupe watch ID [--after N] [--json] [--no-follow]

Prints session ID's event log from the daemon: every event after seq N (default 0), then new ones
as they happen, until Ctrl-C. Each line starts with the event's seq, the cursor to resume from.
  --after N      start after seq N
  --json         one AgentEvent per line (spec/events.md)
  --no-follow    stop once the events that exist now are printed

If the events after N can no longer be served, it says so (replay_gap) and exits 1.

Examples:
  troupe watch ses_0abc…
  troupe watch ses_0abc… --after 120 --json | jq -c '{seq, type}'
`;

interface Ev {
  seq: number;
  type: string;
  turnId?: string;
  messageId?: string;
  text?: string;
  title?: string;
  status?: string;
  kind?: string;
  stopReason?: string;
  content?: { type: string; text?: string }[];
  [k: string]: unknown;
}

/**
 * Text chunks stream on one line per message; other events get a line each. Exported for its tests
 * (test/unit/cli/watch-formatter.test.ts).
 */
export function watchFormatter(out: NodeJS.WritableStream, style: Style) {
  let open: string | undefined;
  // A prompt logged in parts (a large image) shows as its message, with its content joined.
  const parts = new ContentJoiner();
  const end = () => {
    if (open) out.write('\n');
    open = undefined;
  };
  return {
    end,
    /** How many `content_part`s it holds now (for its tests: none once their event, or any other, is printed). */
    get heldParts() {
      return parts.heldParts;
    },
    event(e: Ev) {
      if (e.type === 'content_part') return void parts.add(e as unknown as EventOf<'content_part'>);
      // Parts are only joined for a message, whose content is printed. A tool call's input is not
      // printed, and parts followed by any other event lost their event to a crash: either way they
      // are let go here, not held (a model's multi-megabyte file) until the next prompt.
      if (e.type !== 'user_message' && e.type !== 'steer_received') parts.release();
      // Every field is the daemon's word, spelled out (until 2026-12-06 the type, a tool call's kind and
      // status and a stop reason were printed raw).
      const p = (s: unknown) => printable(String(s ?? ''));
      const seq = style.dim(p(e.seq).padStart(5));
      if (e.type === 'agent_message_chunk' || e.type === 'agent_thought_chunk') {
        const key = `${e.type}:${e.messageId}`;
        if (open !== key) {
          end();
          out.write(`${seq} ${style.cyan(e.type === 'agent_message_chunk' ? 'agent' : 'thought')}  `);
          open = key;
        }
        const chunk = printable(e.text ?? '', { lines: true });
        out.write(e.type === 'agent_thought_chunk' ? style.dim(chunk) : chunk);
        return;
      }
      end();
      // The session's own text (a prompt, a title, a path) is spelled out before it is styled.
      const text = (blocks?: { type: string; text?: string }[]) => p((blocks ?? []).map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join(' '));
      let detail = '';
      if (e.type === 'user_message' || e.type === 'steer_received') detail = style.bold(text(parts.contentOf(e as unknown as PartedMessage)));
      else if (e.type === 'tool_call_started') detail = `${style.bold(p(e.title))} (${p(e.kind)}, ${p(e.status)})`;
      else if (e.type === 'tool_call_updated') detail = `${p(e.title)}${e.status ? ` ${p(e.status)}` : ''}`.trim();
      else if (e.type === 'turn_completed') detail = p(e.stopReason);
      else if (e.type === 'session_created') detail = `${p(e.cwd)} ${p(e.model)} ${p(e.mode)}`;
      else if (e.type === 'session_configured') {
        const listed = e.additionalDirectories as string[] | undefined;
        const dirs = listed && `directories ${listed.length ? listed.map(p).join(' ') : '(none)'}`;
        detail = [e.mode && `mode ${p(e.mode)}`, e.model && `model ${p(e.model)}`, e.title && `title "${p(e.title)}"`, dirs].filter(Boolean).join(', ');
      }
      out.write(`${seq} ${style.cyan(p(e.type))}${detail ? `  ${detail}` : ''}\n`);
    },
  };
}

/**
 * The event stream ended by itself, before Ctrl-C or the end of --no-follow: fine when the session
 * was deleted or closed (the daemon ends its feed), an error when the daemon went away, so that a
 * script can tell the two apart.
 */
async function streamEnded(client: DaemonClient, id: string, io: CliIo): Promise<void> {
  let status: string;
  try {
    status = (await client.session(id)).status;
  } catch (err) {
    if (!isTroupeError(err) || err.code !== 'session_not_found') throw new DaemonGoneError(client.target, err);
    status = 'deleted';
  }
  if (status !== 'deleted' && status !== 'closed') throw new CliError('daemon_unreachable', `the daemon at ${client.target.url} ended the event stream`);
  io.stderr.write(`troupe watch: session ${id} was ${status}\n`);
}

export async function watchCommand(args: string[], io: CliIo): Promise<number> {
  const abort = new AbortController();
  const onSigint = () => abort.abort();
  let stopWatchingReader: (() => void) | undefined;
  try {
    const { values, positionals } = parseCommandArgs('watch', args, { after: { type: 'string' }, json: { type: 'boolean' }, 'no-follow': { type: 'boolean' } });
    if (values.help) return void io.stdout.write(USAGE), EXIT.ok;
    const id = requirePositional('watch', positionals, 0, 'the session id');
    noExtraPositionals('watch', positionals, 1);
    const after = intOption('watch', 'after', values.after, 0);
    const client = new DaemonClient((await connectDaemon(io, { autoStart: false })).target);
    // Asked first, so that a deleted session is `session_not_found` (its log, a tombstone, would
    // answer with a replay gap), as for every other command.
    const entry = await client.session(id);
    const until = values['no-follow'] ? entry.lastSeq : Infinity;
    const fmt = watchFormatter(io.stdout, makeStyle(io.stdout, io.env, values['no-color']));
    process.on('SIGINT', onSigint);
    // The daemon refuses a cursor beyond the latest seq; without following, the stream is not asked
    // for, so the same cursor is refused here (it used to print nothing and exit 0).
    if (values['no-follow'] && after > entry.lastSeq) throw new TroupeError('invalid_cursor', `cursor ${after} is beyond the latest seq ${entry.lastSeq}`, { cursor: after, lastSeq: entry.lastSeq });
    if (after >= until) return EXIT.ok;
    // Following, it may print nothing for hours (an idle session): it leaves once its pipe's reader
    // has (`troupe watch ID | head -3`), not at a next write that may never come (until 2026-12-07).
    if (until === Infinity) stopWatchingReader = onStdoutReaderGone(io.stdout, leaveQuietly);
    let last = after;
    for await (const m of client.events(id, after, abort.signal)) {
      if (m.event === 'replay_gap') {
        fmt.end();
        const body = JSON.parse(m.data) as { message?: string; lastSeq?: unknown };
        // With `lastSeq`, the log was cut short under the stream: what it holds ends before what was printed.
        const hint = typeof body.lastSeq === 'number' ? `watch again from seq ${body.lastSeq} or before` : 'watch from a later cursor';
        throw new CliError('replay_gap', `${body.message ?? `the events after seq ${after} are no longer available`}; ${hint} or reload the session`);
      }
      if (m.event === 'error') {
        fmt.end();
        const body = JSON.parse(m.data) as { code?: string; message?: string };
        const why = `the event stream failed: ${body.message ?? body.code ?? 'unknown error'}`;
        // The daemon's own code (a damaged log is log_corrupt), as every other error of the daemon is shown.
        if (body.code && body.code in ERROR_CODES) throw new TroupeError(body.code as ErrorCode, why);
        throw new CliError('daemon_unreachable', why);
      }
      if (m.event !== 'event') continue;
      const e = JSON.parse(m.data) as Ev;
      if (values.json) io.stdout.write(`${m.data}\n`);
      else fmt.event(e);
      last = e.seq;
      if (e.seq >= until) break;
    }
    fmt.end();
    if (!abort.signal.aborted && last < until) await streamEnded(client, id, io);
    return EXIT.ok;
  } catch (err) {
    return reportError(io, 'watch', err);
  } finally {
    process.removeListener('SIGINT', onSigint);
    stopWatchingReader?.();
    abort.abort();
  }
}
