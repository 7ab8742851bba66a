// The chat loop (src/cli/repl.ts) fed piped input, on a fake ACP link whose agent answers each
// request as a test says: what the loop recorded and printed, and what it asked the agent.
import { PassThrough } from 'node:stream';
import type { AcpLink } from '../../../src/cli/acp-link.js';
import { Repl, type FailedLine } from '../../../src/cli/repl.js';
import { makeStyle } from '../../../src/cli/style.js';
import { UpdateRenderer } from '../../../src/cli/update.renderer.js';

/** A JSON-RPC error as the SDK rejects a request with it, with troupe's code in data.code. */
export const rpcError = (message: string, code: string) => Object.assign(new Error(message), { code: -32602, data: { code } });

/** Plays `lines` as piped input; the agent answers each request with `answer` (a rejection fails it). */
export async function play(lines: string[], answer: (method: string, params: Record<string, unknown>) => unknown): Promise<{ failures: FailedLine[]; printed: string; requests: string[] }> {
  const requests: string[] = [];
  const link = {
    agent: {
      request: async (method: string, params: Record<string, unknown>) => {
        requests.push(method);
        const a = answer(method, params);
        if (a instanceof Error) throw a;
        return a;
      },
      notify: async () => undefined,
    },
    closed: new Promise<void>(() => undefined),
    close: async () => undefined,
  } as unknown as AcpLink;
  const out = new PassThrough();
  let printed = '';
  out.on('data', (c: Buffer) => (printed += c.toString()));
  const style = makeStyle(out, { NO_COLOR: '1' });
  const stdin = new PassThrough();
  const repl = new Repl({
    link,
    target: { url: 'http://127.0.0.1:1', token: 't', remote: true },
    sessionId: 'ses_0test',
    renderer: new UpdateRenderer(out, new PassThrough(), style, { spinner: false }),
    style,
    stdin,
    stdout: out,
    historyPath: '/nonexistent/chat_history',
    prompt: '› ',
  });
  const ran = repl.run();
  stdin.end(lines.map((l) => `${l}\n`).join(''));
  await ran;
  return { failures: repl.failures, printed, requests };
}

