/** The CLI dispatcher: one function per command, each returning its exit code. */
import { VERSION } from '../core/version.js';
import { logDumpCommand } from './log-dump.command.js';
import { modelsCommand } from './models.command.js';

const HELP = `troupe ${VERSION}: a runtime for coding-agent sessions

Usage:
  troupe acp [--check]        run an ACP agent on stdio (for editors; see docs/editors.md)
  troupe models [--json]      list providers, their models, and which are usable with your keys
  troupe log dump <id|file>   print a session's event log (--json for JSON lines)
  troupe --version            print the version
  troupe --help               print this help

Examples:
  troupe acp --check
  troupe models --json
  troupe log dump ses_0abc… --json
`;

type Command = (args: string[], io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream; env: NodeJS.ProcessEnv }) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  models: modelsCommand,
  log: (args, io) => {
    if (args[0] !== 'dump') {
      io.stderr.write(`troupe log: unknown subcommand '${args[0] ?? ''}' (try 'troupe log dump --help')\n`);
      return Promise.resolve(2);
    }
    return logDumpCommand(args.slice(1), io);
  },
};

export async function runCli(command: string | undefined, args: string[]): Promise<number> {
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  const run = COMMANDS[command];
  if (!run) {
    process.stderr.write(`troupe: unknown command '${command}' (try 'troupe --help')\n`);
    return 2;
  }
  return run(args, { stdout: process.stdout, stderr: process.stderr, env: process.env });
}
