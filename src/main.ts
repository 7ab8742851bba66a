/**
 * Entry point: `troupe acp` → src/acp, `troupe serve` → src/daemon, everything else → src/cli.
 * Each face is imported lazily so that `troupe acp` loads only what the agent needs. What the faces
 * print for a person (--help, --version, --check) is the CLI's: a running face's stdout is protocol.
 */

/** Flags that ask `troupe acp` or `troupe serve` for information instead of running it. */
const INFO_FLAGS = new Set(['--help', '-h', '--version', '--check']);

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if ((command === 'acp' || command === 'serve') && rest.some((a) => INFO_FLAGS.has(a))) {
    const { faceInfo } = await import('./cli/face-info.command.js');
    process.exitCode = faceInfo(command, rest, process.env);
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
  // `troupe daemon start` takes serve's options, read by serve's own code, which the CLI may not
  // import (DESIGN §2): given from here, loaded only when asked for.
  const serveOptions = async () => (await import('./daemon/serve-options.js')).serveOptionReader;
  process.exitCode = await runCli(command, rest, { serveOptions });
}
