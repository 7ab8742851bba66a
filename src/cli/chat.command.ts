/**
 * `troupe chat [--cwd DIR] [--session ID]`: an interactive multi-turn conversation on one session
 * (see repl.ts for steering, queueing and the slash commands).
 */
import { resolveTroupeHome } from '../store/paths.js';
import { parseCommandArgs } from './args.js';
import { openLink, type AcpLink } from './acp-link.js';
import { CliError, EXIT, leaveQuietly, reportError, type CliIo } from './cli-io.js';
import { DaemonClient, DaemonGoneError } from './daemon.client.js';
import { chatHistoryPath } from './daemon-home.js';
import { connectDaemon, type Connection } from './daemon-target.js';
import { decidePermission } from './permission-prompt.js';
import { Repl, scriptFailure } from './repl.js';
import { openUnlessInterrupted, SESSION_OPTIONS, type OpenedSession } from './session-open.js';
import { readMcpConfig } from './mcp-config.js';
import { onStdoutReaderGone } from './stdout-reader.js';
import { makeStyle } from './style.js';
import { printable } from './terminal-text.js';
import { UpdateRenderer } from './update.renderer.js';

const USAGE = `Usage: troupe chat [--cwd DIR] [--session ID] [--model M] [--mode M] [--mcp-config FILE] [--add-dir DIR]… [--yes] [--no-color]

An interactive conversation with the agent on one session (a new one, or ID resumed).
While a turn runs, what you type steers it (the agent reads it at its next step); '/queue TEXT'
sends TEXT as the next prompt instead.

Commands: /cancel  /mode M  /model M  /queue TEXT  /help  /quit (or Ctrl-D)
Ctrl-C cancels the running turn (a second one leaves at once, exit 130); when nothing runs it
leaves. History: $TROUPE_HOME/chat_history.
Permission requests are asked inline (y, a, n, never); --yes allows them all.
--mcp-config FILE starts the MCP servers of FILE for the session ({"mcpServers": {...}}, docs/cli.md).
--add-dir DIR (repeatable) lets the session use DIR too; with --session it replaces the ones it had.
Piped input (no terminal) is played one prompt per line, each after the previous turn ended; the
chat then exits 1 if one of its turns or commands failed.

Examples:
  troupe chat
  troupe chat --session ses_0abc…
  printf 'list the files\\nread package.json\\n' | troupe chat --yes
`;

/**
 * The chat's first line: the session it works on. Its id and directories are the daemon's words,
 * spelled out (until 2026-12-06 the id was printed raw).
 */
export function openedNote(opened: OpenedSession): string {
  const also = opened.additionalDirectories.length ? ` (also ${opened.additionalDirectories.map((d) => printable(d)).join(', ')})` : '';
  return `[${opened.resumed ? 'resumed' : 'new'} session ${printable(opened.sessionId)} in ${printable(opened.cwd)}${also} · /help for commands]`;
}

export async function chatCommand(args: string[], io: CliIo): Promise<number> {
  let conn: Connection | undefined;
  let link: AcpLink | undefined;
  let stopWatchingReader: (() => void) | undefined;
  try {
    const { values, positionals } = parseCommandArgs('chat', args, SESSION_OPTIONS);
    if (values.help) return void io.stdout.write(USAGE), EXIT.ok;
    if (positionals.length) throw new CliError('usage', `takes no prompt argument, got '${positionals[0]}': type it at the chat's prompt, or run one turn with 'troupe run "…"'`);
    const mcpServers = values['mcp-config'] ? readMcpConfig(values['mcp-config']) : undefined;
    const stdin = io.stdin ?? process.stdin;
    const style = makeStyle(io.stdout, io.env, values['no-color']);
    // No spinner: it would draw over what the person is typing at the readline prompt. Prompts shown:
    // the daemon sends a client no echo of its own, so these are what others (an editor attached to
    // the same session) asked.
    const renderer = new UpdateRenderer(io.stdout, io.stderr, style, { spinner: false });
    // Piped input: known to hold a prompt, or none, once its first bytes that are not blank or its end come.
    const input = (stdin as { isTTY?: boolean }).isTTY ? undefined : holdsInput(stdin);
    conn = await connectDaemon(io, { autoStart: true });
    let sessionId: string | undefined;
    let repl: Repl | undefined;
    link = await openLink(conn.target, {
      update: (n) => n.sessionId === sessionId && renderer.update(n),
      permission: (req) => {
        renderer.done();
        return decidePermission(req, { yes: values.yes ?? false, ask: repl?.ask, style, note: (l) => renderer.note(l) });
      },
    });
    const daemon = new DaemonClient(conn.target);
    // Ctrl-C while a new session is being opened (session/new waits for its MCP servers to start): it
    // is deleted once it is made, as run does, not left behind empty (until 2026-12-07 the chat died
    // of the signal and the daemon made the session all the same). A second Ctrl-C leaves at once.
    let interruptedWhileOpening = false;
    const onOpeningInterrupt = () => {
      if (interruptedWhileOpening || values.session) {
        io.stderr.write('troupe chat: interrupted\n');
        process.exit(EXIT.cancelled);
      }
      interruptedWhileOpening = true;
      io.stderr.write(`${style.yellow('[interrupted: removing the session being opened… press Ctrl-C again to quit]')}\n`);
    };
    process.on('SIGINT', onOpeningInterrupt);
    let opened;
    try {
      const opts = { sessionId: values.session, cwd: values.cwd, mode: values.mode, model: values.model, mcpServers, additionalDirectories: values['add-dir'] };
      opened = await openUnlessInterrupted(link, daemon, opts, () => interruptedWhileOpening);
    } finally {
      process.removeListener('SIGINT', onOpeningInterrupt);
    }
    if (!opened) {
      io.stderr.write('troupe chat: interrupted\n');
      return EXIT.cancelled;
    }
    sessionId = opened.sessionId;
    // No input at all (`troupe chat </dev/null`), or only blank lines: nothing to say to the session,
    // so none is kept (until 2026-12-07 each such run left an empty session behind). It is opened all
    // the same, so that a mistyped --mode or --cwd fails as with input.
    const held = await input;
    if (held === 'none' || held === 'blank') {
      if (!opened.resumed) await daemon.remove(opened.sessionId).catch(() => undefined);
      const what = held === 'none' ? 'no input' : 'no prompt in the input (only blank lines)';
      io.stderr.write(`troupe chat: ${what}${opened.resumed ? '' : ', so no session was kept'}\n`);
      return EXIT.ok;
    }
    renderer.note(style.dim(openedNote(opened)));
    // A turn may print nothing for long (a command running): the chat leaves once no one reads it
    // (`… | troupe chat | head`), cancelling its turn (the loop's part), not at a write that may not come.
    stopWatchingReader = onStdoutReaderGone(io.stdout, leaveQuietly);
    repl = new Repl({
      link,
      target: conn.target,
      sessionId,
      renderer,
      style,
      stdin,
      stdout: io.stdout,
      historyPath: chatHistoryPath(resolveTroupeHome(io.env)),
      prompt: style.bold('› '),
    });
    await repl.run();
    renderer.done();
    if (repl.lost) throw new DaemonGoneError(conn.target);
    if (repl.interrupted) {
      io.stderr.write('troupe chat: interrupted\n');
      return EXIT.cancelled;
    }
    // Piped input is a script: as `troupe run`, it fails when a line of it failed, a turn or a slash
    // command (until 2026-12-06 it exited 0 after either).
    const failed = scriptFailure(stdin as { isTTY?: boolean }, repl.failures);
    if (failed) {
      io.stderr.write(`troupe chat: ${failed}\n`);
      return EXIT.error;
    }
    return EXIT.ok;
  } catch (err) {
    return reportError(io, 'chat', err);
  } finally {
    stopWatchingReader?.();
    link?.close();
    await conn?.release();
  }
}

/** Bytes the chat reads as nothing: blank lines and the spaces around a prompt (it trims each line). */
const BLANK = /^[ \t\n\r\v\f]*$/;

/**
 * Whether `stdin` holds a prompt: true at its first bytes that are not blank (put back, for the chat
 * to read), false at its end with none. Blank bytes before them are let go: the chat skips blank
 * lines, and a prompt's leading spaces are trimmed. A read error is left for the chat to meet.
 */
function holdsInput(stdin: NodeJS.ReadableStream): Promise<'prompt' | 'blank' | 'none'> {
  return new Promise((resolve) => {
    let blank = false;
    const settle = (holds: 'prompt' | 'blank' | 'none') => {
      stdin.off('readable', onReadable).off('end', onEnd).off('error', onError);
      resolve(holds);
    };
    const onReadable = () => {
      // null: nothing more for now, or the end (its 'end' follows).
      for (let chunk = stdin.read(); chunk !== null; chunk = stdin.read()) {
        // Until 2026-12-07 blank lines (`printf '\n\n' | troupe chat`) counted as input: a session was
        // made and kept with nothing said to it.
        if (BLANK.test(typeof chunk === 'string' ? chunk : chunk.toString('latin1'))) {
          blank = true;
          continue;
        }
        stdin.unshift(chunk);
        return settle('prompt');
      }
    };
    const onEnd = () => settle(blank ? 'blank' : 'none');
    const onError = () => settle('prompt');
    stdin.on('readable', onReadable).on('end', onEnd).on('error', onError);
  });
}
