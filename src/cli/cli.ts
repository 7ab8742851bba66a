/** The CLI dispatcher: one function per command, each returning its exit code. */
import { VERSION } from '../core/version.js';

const HELP = `troupe ${VERSION}: a runtime for coding-agent sessions

Usage:
  troupe acp              run an ACP agent on stdio (for editors)
  troupe serve            run the daemon in the foreground
  troupe --version        print the version
  troupe --help           print this help
`;

export async function runCli(command: string | undefined, _args: string[]): Promise<number> {
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  process.stderr.write(`troupe: unknown command '${command}' (try 'troupe --help')\n`);
  return 2;
}
