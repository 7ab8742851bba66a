/**
 * `troupe run "<prompt>"`: one turn on a new or resumed session, streamed to the terminal (or as
 * JSON lines), through the daemon's ACP transport. Ctrl-C cancels the turn; a second one quits.
 */
import type * as acp from '@agentclientprotocol/sdk';
import { parseCommandArgs } from './args.js';
import { openLink, rpcToError, type AcpLink } from './acp-link.js';
import { beforeHastyExit, cancelOnTermination, EXIT, leaveQuietly, reportError, type CliIo } from './cli-io.js';
import { DaemonClient } from './daemon.client.js';
import { connectDaemon, type Connection } from './daemon-target.js';
import { decidePermission } from './permission-prompt.js';
import { openUnlessInterrupted, SESSION_OPTIONS } from './session-open.js';
import { readMcpConfig } from './mcp-config.js';
import { readPrompt } from './stdin-prompt.js';
import { onStdoutReaderGone } from './stdout-reader.js';
import { makeStyle } from './style.js';
import { printable } from './terminal-text.js';
import { canAsk, terminalAsk } from './tty-ask.js';
import { UpdateRenderer } from './update.renderer.js';

const USAGE = `Usage: troupe run [options] "<prompt>"
       COMMAND | troupe run [options]     (or: troupe run [options] - < FILE)

Runs one turn of the agent and streams the answer: text as it arrives, thoughts dimmed, tool calls
with their status, diffs and command output. Starts the daemon if none is running.

With no prompt and a stdin that is not a terminal, or with the prompt '-', the prompt is what stdin
holds, read to its end (at most 16 MiB). A prompt given as words wins: stdin is then not read.
A prompt that starts with '-' goes after '--': troupe run -- "-v is not a flag here".

Options:
  --cwd DIR        directory of a new session (default: the current directory)
  --session ID     continue this session (session/resume) instead of starting one
  --model M        use model M (e.g. scripted/demo, anthropic/claude-sonnet-5-5)
  --mode M         default | accept-edits | plan | bypass
  --mcp-config F   start the MCP servers of file F for the session ({"mcpServers": {...}}, docs/cli.md)
  --add-dir DIR    let the session use DIR too (repeatable; with --session: replaces the ones it had)
  --yes, -y        allow every permission request without asking
  --json           print the session's updates as JSON lines, then {"sessionId","stopReason"}
  --standalone     use a private daemon for this command only (gone when it exits)
  --no-color       plain output (also: NO_COLOR=1)
  -h, --help       this help

Permissions: on a terminal you are asked (allow once, allow always, reject); without one, or with
the prompt read from stdin, they are denied unless --yes is given. Ctrl-C cancels the turn
(session/cancel); a second Ctrl-C quits.
Exit codes: 0 turn ended, 1 error, 2 usage, 130 cancelled.

Examples:
  troupe run "list the files here and read package.json"
  troupe run --cwd ~/src/app --mode accept-edits "create a file notes.txt with hello"
  troupe run --session ses_0abc… "and now read the README"
  echo "list the files here" | troupe run
  troupe run --mode accept-edits - < task.md
  troupe run --json "list the files" | jq -r 'select(.update) | .update.sessionUpdate'
  troupe run --standalone --yes 'run \`ls -la\`'
`;

export async function runCommand(args: string[], io: CliIo): Promise<number> {
  let conn: Connection | undefined;
  try {
    const { values, positionals } = parseCommandArgs('run', args, {
      ...SESSION_OPTIONS,
      json: { type: 'boolean' },
      standalone: { type: 'boolean' },
    }, 'a prompt');
    if (values.help) return void io.stdout.write(USAGE), EXIT.ok;
    const stdin = io.stdin ?? process.stdin;
    const { text, fromStdin } = await readPrompt(positionals, stdin, io.stderr);
    const mcpServers = values['mcp-config'] ? readMcpConfig(values['mcp-config']) : undefined;
    conn = await connectDaemon(io, { autoStart: true, standalone: values.standalone ?? false });
    return await runTurn(io, conn, text, { ...values, mcpServers, stdinRead: fromStdin });
  } catch (err) {
    return reportError(io, 'run', err);
  } finally {
    await conn?.release();
  }
}

/**
 * The notes of the agent's and the daemon's words: a stop reason, a session id, why a session failed
 * are their text, spelled out (until 2026-12-06 printed raw).
 */
export const turnEndNote = (stopReason: string, sessionId: string) => `[${printable(stopReason)} · session ${printable(sessionId)}]`;
export const sessionFailedNote = (params: unknown) => `[session failed: ${printable(String((params as { reason?: unknown } | undefined)?.reason ?? 'unknown'))}]`;

interface RunOptions {
  cwd?: string;
  session?: string;
  model?: string;
  mode?: string;
  /** From `--mcp-config`, read before anything starts. */
  mcpServers?: unknown[];
  /** `--add-dir`, repeatable. */
  'add-dir'?: string[];
  yes?: boolean;
  json?: boolean;
  'no-color'?: boolean;
  standalone?: boolean;
  /** The prompt was read from stdin: it is used up, and no one is there to answer a question. */
  stdinRead?: boolean;
}

async function runTurn(io: CliIo, conn: Connection, text: string, o: RunOptions): Promise<number> {
  const stdin = io.stdin ?? process.stdin;
  const style = makeStyle(io.stdout, io.env, o['no-color']);
  const renderer = new UpdateRenderer(io.stdout, io.stderr, style, { spinner: !o.json });
  const note = (line: string) => (o.json ? io.stderr.write(`${line}\n`) : renderer.note(line));
  const client = new DaemonClient(conn.target);
  let sessionId: string | undefined;
  const turn = new AbortController();
  let interrupts = 0;
  let link: AcpLink | undefined;
  let cancelOnExit: (() => Promise<void>) | undefined;
  let leaveInHaste: (() => Promise<void>) | undefined;
  let stopCancellingOnTermination: (() => void) | undefined;
  let stopWatchingReader: (() => void) | undefined;

  // Ctrl-C while a new session is being opened (session/new waits for its MCP servers to start):
  // the session is deleted once it is made, not left behind empty (until 2026-12-07 run left at once).
  let interruptedWhileOpening = false;
  const onInterrupt = () => {
    interrupts++;
    if (interrupts === 1 && link && sessionId) {
      note(style.yellow('[cancelling… press Ctrl-C again to quit]'));
      turn.abort();
      void link.agent.notify('session/cancel', { sessionId }).catch(() => undefined);
      return;
    }
    if (interrupts === 1 && link && !o.session) {
      interruptedWhileOpening = true;
      turn.abort();
      note(style.yellow('[interrupted: removing the session being opened… press Ctrl-C again to quit]'));
      return;
    }
    renderer.done();
    io.stderr.write('troupe run: interrupted\n');
    void conn.release().finally(() => process.exit(EXIT.cancelled));
  };
  const ask = !o.stdinRead && canAsk(stdin, io.stderr) ? terminalAsk(stdin, io.stderr, onInterrupt, turn.signal) : undefined;

  process.on('SIGINT', onInterrupt);
  try {
    link = await openLink(conn.target, {
      update: (n) => {
        if (n.sessionId !== sessionId) return;
        if (o.json) io.stdout.write(`${JSON.stringify(n)}\n`);
        else renderer.update(n);
      },
      permission: (req) => {
        if (turn.signal.aborted) return Promise.resolve({ outcome: { outcome: 'cancelled' } });
        renderer.done();
        return decidePermission(req, { yes: o.yes ?? false, ask, style, note }).finally(() => renderer.waiting());
      },
      notification: (method, params) => {
        if (method === '_troupe/session_failed') note(style.red(sessionFailedNote(params)));
      },
    });
    const opts = { sessionId: o.session, cwd: o.cwd, mode: o.mode, model: o.model, mcpServers: o.mcpServers, additionalDirectories: o['add-dir'] };
    const opened = await openUnlessInterrupted(link, client, opts, () => interruptedWhileOpening);
    if (!opened) {
      renderer.done();
      io.stderr.write('troupe run: interrupted\n');
      return EXIT.cancelled;
    }
    sessionId = opened.sessionId;
    const id = sessionId;
    cancelOnExit = () => link!.agent.notify('session/cancel', { sessionId: id });
    // Stdout closed, or terminated: cancel, and end the connection, which the process leaving at once
    // would not (the daemon would keep it until --connection-idle-ms).
    leaveInHaste = () => cancelOnExit!().finally(() => link!.close());
    beforeHastyExit.add(leaveInHaste);
    // A turn may print nothing for long (a command running, a model thinking): once no one reads it
    // (`troupe run … | head`), it is cancelled then, not at a write that may not come (until 2026-12-07).
    stopWatchingReader = onStdoutReaderGone(io.stdout, leaveQuietly);
    // A --standalone daemon is stopped whole on these signals (standalone-daemon.ts).
    if (!o.standalone) stopCancellingOnTermination = cancelOnTermination(leaveInHaste);
    if (!o.json) renderer.waiting();
    let result: acp.PromptResponse;
    try {
      result = await link.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
    } catch (err) {
      const e = rpcToError(err, conn.target);
      if (o.json) io.stdout.write(`${JSON.stringify({ sessionId, error: { code: (e as { code?: string }).code ?? 'internal_error', message: e.message } })}\n`);
      throw e;
    }
    renderer.done();
    const turnId = (result._meta as { troupe?: { turnId?: string } } | undefined)?.troupe?.turnId;
    if (o.json) io.stdout.write(`${JSON.stringify({ sessionId, stopReason: result.stopReason, ...(turnId ? { turnId } : {}) })}\n`);
    else io.stderr.write(style.dim(`${turnEndNote(result.stopReason, sessionId)}\n`));
    return result.stopReason === 'cancelled' ? EXIT.cancelled : EXIT.ok;
  } finally {
    stopWatchingReader?.();
    stopCancellingOnTermination?.();
    if (leaveInHaste) beforeHastyExit.delete(leaveInHaste);
    renderer.done();
    process.removeListener('SIGINT', onInterrupt);
    link?.close();
  }
}
