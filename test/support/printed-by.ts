/**
 * What a command printed on stdout, once it has exited (its stderr goes to the test's): for a test
 * that runs a script in a process of its own (a lowered file-size limit, a crash) and reads back
 * the JSON it printed.
 */
import { spawn } from 'node:child_process';

export function printedBy(command: string, args: readonly string[]): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const p = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    p.stdout!.on('data', (d) => (text += d));
    p.once('error', reject);
    p.once('exit', () => resolve(text));
  });
}

/** `printedBy` of an ES module `script` run by this node (`prefix`: a command that runs it, such as prlimit). */
export const printedByModule = (script: string, prefix: readonly string[] = []): Promise<string> =>
  prefix.length ? printedBy(prefix[0]!, [...prefix.slice(1), process.execPath, '--input-type=module', '-e', script]) : printedBy(process.execPath, ['--input-type=module', '-e', script]);
