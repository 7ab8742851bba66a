/** The CLI dispatcher: one function per command, each returning its exit code (docs/cli.md). */
import { VERSION } from '../core/version.js';
import { EXIT, leaveQuietly, shuttingDown, type CliIo } from './cli-io.js';
import { systemErrorReason } from './file-read-failed.js';
import type { ServeOptionReader } from './daemon.command.js';

const HELP = `troupe ${VERSION}: a runtime for coding-agent sessions

Usage:
  troupe run "<prompt>"           run one turn of the agent (starts the daemon if needed)
  troupe chat                     an interactive conversation on one session
  troupe attach ID                follow a live session driven by another client
  troupe watch ID [--after N]     tail a session's event log by cursor
  troupe sessions [list|show|revive|delete]
                                  list, show, revive or delete sessions
  troupe cancel ID                cancel a session's running turn
  troupe steer ID "<text>"        guide a session's running turn
  troupe inspect [ID]             open the live inspector of sessions and their state machines
  troupe daemon start|stop|status|logs|token
                                  manage the local daemon
  troupe serve                    run the daemon in the foreground
  troupe acp [--check]            run an ACP agent on stdio (for editors; see docs/editors.md)
  troupe models [--json]          list providers, their models, and which are usable with your keys
  troupe log dump <id|file>       print a session's event log from disk (--json for JSON lines)
  troupe --version                print the version
  troupe <command> --help         a command's options and examples

Environment: TROUPE_HOME (state directory), TROUPE_URL + TROUPE_TOKEN (use a remote daemon),
NO_COLOR, TROUPE_LOG=debug (stack traces). Exit codes: 0 ok, 1 error, 2 usage, 130 cancelled.

Examples:
  troupe run "list the files here and read package.json"
  troupe run --json --yes "create a file notes.txt with hello"
  troupe chat --session ses_0abc…
  troupe sessions --json
  troupe daemon status
`;

/** What src/main.ts gives the CLI of the other faces: `troupe daemon start` takes serve's options (daemon.command.ts). */
export interface OtherFaces {
  serveOptions?: () => Promise<ServeOptionReader>;
}

type Command = (args: string[], io: CliIo, faces?: OtherFaces) => Promise<number>;

/** Commands are loaded on use: each pays only for its own imports. */
const COMMANDS: Record<string, Command> = {
  models: async (a, io) => (await import('./models.command.js')).modelsCommand(a, io),
  log: async (args, io) => {
    const { logDumpCommand } = await import('./log-dump.command.js');
    if (args[0] === '--help' || args[0] === '-h') return logDumpCommand(['--help'], io);
    if (args[0] !== 'dump') {
      io.stderr.write(`troupe log: ${args[0] === undefined ? 'missing the subcommand (dump)' : `unknown subcommand '${args[0]}'`} (try 'troupe log dump --help')\n`);
      return 2;
    }
    return logDumpCommand(args.slice(1), io);
  },
  run: async (a, io) => (await import('./run.command.js')).runCommand(a, io),
  chat: async (a, io) => (await import('./chat.command.js')).chatCommand(a, io),
  attach: async (a, io) => (await import('./attach.command.js')).attachCommand(a, io),
  watch: async (a, io) => (await import('./watch.command.js')).watchCommand(a, io),
  sessions: async (a, io) => (await import('./sessions.command.js')).sessionsCommand(a, io),
  cancel: async (a, io) => (await import('./control.command.js')).cancelCommand(a, io),
  steer: async (a, io) => (await import('./control.command.js')).steerCommand(a, io),
  daemon: async (a, io, faces) => (await import('./daemon.command.js')).daemonCommand(a, io, faces?.serveOptions),
  inspect: async (a, io) => (await import('./inspect.command.js')).inspectCommand(a, io),
};

export async function runCli(command: string | undefined, args: string[], faces?: OtherFaces): Promise<number> {
  const io: CliIo = { stdout: process.stdout, stderr: process.stderr, env: process.env, stdin: process.stdin };
  // `troupe run … | head` closes the pipe early: stop quietly, as Unix tools do, after cancelling the
  // turn (bounded: the daemon may be gone) and stopping a standalone daemon.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') return leaveQuietly();
      // Output that cannot be written otherwise (a full disk: `troupe sessions > /dev/full`, ENOSPC;
      // EIO) is one line and exit 1, as `cat` says a write error: until 2026-12-07 it was thrown from
      // here, a stack trace. A failing stderr has no one to tell, and is no failure of the command.
      // Said once: each later write can fail again.
      if (stream === process.stderr || shuttingDown.value) return;
      const errno = typeof err.code === 'string' ? ` (${err.code})` : '';
      const who = command !== undefined && command in COMMANDS ? `troupe ${command}` : 'troupe';
      process.stderr.write(`${who}: cannot write to stdout: ${systemErrorReason(err)}${errno} (output_failed)\n`);
      leaveQuietly(EXIT.error);
    });
  }
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  if (command === '--version' || command === '-v') {
    process.stdout.write(`troupe ${VERSION}\n`);
    return 0;
  }
  const run = COMMANDS[command];
  if (!run) {
    process.stderr.write(`troupe: unknown command '${command}' (try 'troupe --help')\n`);
    return 2;
  }
  const code = await run(args, io, faces);
  // Open sockets of a finished command (keep-alive agents, closed SSE readers) must not keep the
  // process alive; long-running commands only return when they are done.
  // A command winding down in haste (stdout closed, or terminated) leaves by itself, by exit(0) or the
  // signal, once its last requests are answered (at most 2 s): not with this code, and not sooner.
  if (command !== 'models' && command !== 'log') setTimeout(() => shuttingDown.value || process.exit(code), 200).unref();
  return code;
}
