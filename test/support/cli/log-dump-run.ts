// `troupe log dump` run in this process, its stdout and stderr captured (tests of the command).
import { PassThrough } from 'node:stream';
import { logDumpCommand } from '../../../src/cli/log-dump.command.js';

function capture(): { stream: PassThrough; text(): string } {
  const stream = new PassThrough();
  const parts: Buffer[] = [];
  stream.on('data', (d: Buffer) => parts.push(d));
  return { stream, text: () => Buffer.concat(parts).toString('utf8') };
}

export async function runLogDump(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string }> {
  const out = capture();
  const err = capture();
  const code = await logDumpCommand(args, { stdout: out.stream, stderr: err.stream, env });
  return { code, out: out.text(), err: err.text() };
}
