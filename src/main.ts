/**
 * Entry point: `troupe acp` → src/acp, `troupe serve` → src/daemon, everything else → src/cli.
 * Each face is imported lazily so that `troupe acp` loads only what the agent needs.
 */
import { VERSION } from './core/version.js';

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === '--version' || command === '-v') {
    process.stdout.write(`troupe ${VERSION}\n`);
    return;
  }
  if (command === 'acp') {
    const { runAcp } = await import('./acp/acp.command.js');
    process.exitCode = await runAcp(rest);
    return;
  }
  if (command === 'serve') {
    const { runServe } = await import('./daemon/serve.command.js');
    // The daemon has stopped every child and closed its sockets: nothing is left to wait for.
    process.exit(await runServe(rest));
  }
  const { runCli } = await import('./cli/cli.js');
  process.exitCode = await runCli(command, rest);
}
