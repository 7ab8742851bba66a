/**
 * One question on the terminal (node:readline on stdin, the question on stderr so stdout stays the
 * agent's). Ctrl-C while asking is passed on as an interrupt and abandons the question.
 */
import { createInterface } from 'node:readline';
import type { Ask } from './permission-prompt.js';

/** True when a person can answer: stdin and stderr are both terminals. */
export function canAsk(stdin: NodeJS.ReadableStream, stderr: NodeJS.WritableStream): boolean {
  return Boolean((stdin as { isTTY?: boolean }).isTTY && (stderr as { isTTY?: boolean }).isTTY);
}

/** An Ask on the terminal; `onInterrupt` runs on Ctrl-C; `signal` abandons a pending question. */
export function terminalAsk(stdin: NodeJS.ReadableStream, stderr: NodeJS.WritableStream, onInterrupt: () => void, signal: AbortSignal): Ask {
  return (question) =>
    new Promise((resolve) => {
      if (signal.aborted) return resolve(undefined);
      const rl = createInterface({ input: stdin, output: stderr, terminal: true });
      let settled = false;
      const finish = (answer: string | undefined) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        rl.close();
        // Enter ended the question's line; Ctrl-D, Ctrl-C or an abort leave the cursor after it, so
        // what follows (the call's failure, "[cancelling…]") would be printed on the question's line.
        if (answer === undefined) stderr.write('\n');
        resolve(answer);
      };
      const onAbort = () => finish(undefined);
      signal.addEventListener('abort', onAbort, { once: true });
      rl.on('SIGINT', () => {
        finish(undefined);
        onInterrupt();
      });
      rl.on('close', () => finish(undefined));
      rl.question(question, (answer) => finish(answer));
    });
}
