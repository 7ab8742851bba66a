/**
 * `troupe attach ID`: follows a live session that another client drives. A new ACP connection
 * resumes the session (`session/resume`, no replay) and from then on receives its updates. Read-only
 * unless --interactive, which adds the chat loop (prompts, steering, permissions).
 */
import { TroupeError } from '../core/errors.js';
import { resolveTroupeHome } from '../store/paths.js';
import { noExtraPositionals, parseCommandArgs, requirePositional } from './args.js';
import { openLink, type AcpLink } from './acp-link.js';
import { beforeHastyExit, cancelOnTermination, EXIT, leaveQuietly, reportError, type CliIo } from './cli-io.js';
import { DaemonClient, DaemonGoneError } from './daemon.client.js';
import { chatHistoryPath } from './daemon-home.js';
import { connectDaemon, type Connection } from './daemon-target.js';
import { decidePermission, toolCallSummary } from './permission-prompt.js';
import { Repl, scriptFailure } from './repl.js';
import { openSession } from './session-open.js';
import { makeStyle } from './style.js';
import { onStdoutReaderGone } from './stdout-reader.js';
import { printable } from './terminal-text.js';
import { UpdateRenderer } from './update.renderer.js';

const USAGE = `Usage: troupe attach ID [--interactive] [--json]

Follows session ID live, as another client drives it: messages, thoughts, tool calls. Read-only:
permission requests that reach this client are rejected. Ctrl-C detaches (the session goes on).
  -i, --interactive  also type prompts (or steer the running turn) and answer permissions, as in chat
  --json             print the updates as JSON lines (session/update params) instead

Examples:
  troupe attach ses_0abc…
  troupe attach ses_0abc… --interactive
`;

export async function attachCommand(args: string[], io: CliIo): Promise<number> {
  let conn: Connection | undefined;
  let link: AcpLink | undefined;
  let stopClosingOnTermination: (() => void) | undefined;
  const stop = new AbortController();
  const onSigint = () => stop.abort();
  let closeOnHastyExit: (() => Promise<void>) | undefined;
  let stopWatchingReader: (() => void) | undefined;
  try {
    const { values, positionals } = parseCommandArgs('attach', args, { interactive: { type: 'boolean', short: 'i' }, json: { type: 'boolean' } });
    if (values.help) return void io.stdout.write(USAGE), EXIT.ok;
    const id = requirePositional('attach', positionals, 0, 'the session id');
    noExtraPositionals('attach', positionals, 1);
    const stdin = io.stdin ?? process.stdin;
    const style = makeStyle(io.stdout, io.env, values['no-color']);
    const renderer = new UpdateRenderer(io.stdout, io.stderr, style, { spinner: false });
    // With --json, stdout holds only the updates: notes go to stderr.
    const note = (line: string) => (values.json ? io.stderr.write(`${line}\n`) : renderer.note(line));
    conn = await connectDaemon(io, { autoStart: false });
    let repl: Repl | undefined;
    let lost = false;
    // The session ended for good under this client: deleted (the daemon says so, and attach ends as
    // watch does) or failed (an error). Either way no update will come again.
    let ended: ((how: 'deleted' | 'failed') => void) | undefined;
    const sessionEnded = new Promise<'deleted' | 'failed'>((r) => (ended = r));
    link = await openLink(conn.target, {
      update: (n) => {
        if (n.sessionId !== id) return;
        if (values.json) io.stdout.write(`${JSON.stringify(n)}\n`);
        else renderer.update(n);
      },
      permission: (req) => {
        renderer.done();
        if (!values.interactive) {
          note(style.yellow(`[attach is read-only: rejected ${toolCallSummary(req)}; use --interactive to answer]`));
          const reject = req.options.find((o) => o.kind === 'reject_once');
          return Promise.resolve(reject ? { outcome: { outcome: 'selected', optionId: reject.optionId } } : { outcome: { outcome: 'cancelled' } });
        }
        return decidePermission(req, { yes: false, ask: repl?.ask, style, note });
      },
      notification: (method, params) => {
        if ((params as { sessionId?: unknown } | undefined)?.sessionId !== id) return;
        if (method === '_troupe/session_deleted') ended?.('deleted');
        if (method === '_troupe/session_failed') ended?.('failed');
      },
    });
    const opened = await openSession(link, new DaemonClient(conn.target), { sessionId: id });
    // No one reads stdout any more (EPIPE, or its pipe's reader gone: `troupe attach ID | head`, an idle
    // session then printing nothing for hours): the connection is ended before the command leaves
    // (until 2026-12-07 the daemon kept it until --connection-idle-ms, and attach ran on until a write).
    closeOnHastyExit = () => link!.close();
    beforeHastyExit.add(closeOnHastyExit);
    stopWatchingReader = onStdoutReaderGone(io.stdout, leaveQuietly);
    // Listening before saying "Ctrl-C detaches": until 2026-12-06 the listener came after the line,
    // and a Ctrl-C right after it killed the process (no exit 0, the connection left to the daemon).
    if (!values.interactive) {
      process.on('SIGINT', onSigint);
      // Terminated: the connection is ended first, not left to the daemon's --connection-idle-ms.
      stopClosingOnTermination = cancelOnTermination(() => link!.close());
    }
    // The cwd is the daemon's record of the session (a directory's name may hold any character but `/`):
    // spelled out, as chat shows it (until 2026-12-06 attach printed it raw).
    io.stderr.write(style.dim(`[attached to ${id} in ${printable(opened.cwd)}; Ctrl-C detaches]\n`));
    let end: 'deleted' | 'failed' | undefined;
    let scriptFailed: string | undefined;
    if (values.interactive) {
      repl = new Repl({ link, target: conn.target, sessionId: id, renderer, style, stdin, stdout: io.stdout, historyPath: chatHistoryPath(resolveTroupeHome(io.env)), prompt: style.bold('› ') });
      await repl.run();
      lost = repl.lost;
      // Piped input is a script, as for chat (until 2026-12-06 attach -i exited 0 after a failed line).
      scriptFailed = lost ? undefined : scriptFailure(stdin as { isTTY?: boolean }, repl.failures);
    } else {
      const closed = link.closed.then(() => 'closed' as const);
      const aborted = new Promise<'detached'>((r) => stop.signal.addEventListener('abort', () => r('detached'), { once: true }));
      const how = await Promise.race([closed, aborted, sessionEnded]);
      lost = how === 'closed';
      if (how === 'deleted' || how === 'failed') end = how;
    }
    renderer.done();
    if (end === 'failed') throw new TroupeError('session_failed', `session ${id} crashed too often and is no longer restarted`, { sessionId: id });
    if (end === 'deleted') {
      io.stderr.write(`troupe attach: session ${id} was deleted\n`);
      return EXIT.ok;
    }
    // Only Ctrl-C (or /quit) detaches: a connection the daemon ended is an error a script can see.
    if (lost) throw new DaemonGoneError(conn.target);
    if (scriptFailed) {
      io.stderr.write(`troupe attach: ${scriptFailed}\n`);
      return EXIT.error;
    }
    return EXIT.ok;
  } catch (err) {
    return reportError(io, 'attach', err);
  } finally {
    process.removeListener('SIGINT', onSigint);
    stopClosingOnTermination?.();
    stopWatchingReader?.();
    if (closeOnHastyExit) beforeHastyExit.delete(closeOnHastyExit);
    link?.close();
    await conn?.release();
  }
}
