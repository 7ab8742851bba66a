/**
 * The prompt of `troupe run`: its words, or what stdin holds (`git diff | troupe run`, or
 * `troupe run -`), read to its end within what one request to the daemon carries.
 */
import { jsonStringBytes } from '../core/json-bytes.js';
import { MAX_ACP_BODY_BYTES } from '../wire/acp-body-limit.js';
import { CliError } from './cli-io.js';

/**
 * Room left in a request for what goes around the prompt's text: the JSON-RPC envelope, the session
 * id (at most 1024 characters, up to 6 bytes each in JSON), the content block's keys.
 */
const ENVELOPE_BYTES = 16 * 1024;

/** The most a prompt read from stdin may take as a JSON string: what fits in one `session/prompt`. */
export const MAX_STDIN_PROMPT_BYTES = MAX_ACP_BODY_BYTES - ENVELOPE_BYTES;

/** Whether the prompt is read from stdin: the one word `-`, or no words and a stdin that is not a terminal. */
function promptFromStdin(positionals: readonly string[], stdin: NodeJS.ReadableStream): boolean {
  if (positionals.length === 1 && positionals[0] === '-') return true;
  return positionals.length === 0 && !(stdin as { isTTY?: boolean }).isTTY;
}

/**
 * The prompt: the words joined, else (see {@link promptFromStdin}) stdin's text, trimmed, and whether
 * it was read from stdin. Words win over a piped stdin, which is then not read: a script's
 * `troupe run "…"` whose stdin is a pipe that stays open (a parent that never closes it, a
 * `while read` loop's input) neither hangs nor eats it.
 */
export async function readPrompt(positionals: readonly string[], stdin: NodeJS.ReadableStream, stderr: NodeJS.WritableStream): Promise<{ text: string; fromStdin: boolean }> {
  if (!promptFromStdin(positionals, stdin)) {
    const text = positionals.join(' ').trim();
    if (!text) throw new CliError('usage', `missing the prompt (try 'troupe run --help')`);
    return { text, fromStdin: false };
  }
  // `troupe run -` on a terminal: say what it waits for.
  if ((stdin as { isTTY?: boolean }).isTTY) stderr.write('troupe run: reading the prompt from stdin (Ctrl-D ends it)\n');
  const text = (await readBounded(stdin, MAX_STDIN_PROMPT_BYTES))?.trim();
  if (text === '') throw new CliError('usage', `missing the prompt: stdin was empty (try 'troupe run --help')`);
  // Its UTF-8 bytes, then its JSON: control characters take 6 bytes each there.
  if (text === undefined || jsonStringBytes(text) > MAX_STDIN_PROMPT_BYTES) {
    throw new CliError('prompt_too_large', `the prompt on stdin is too large: one request to the daemon carries at most ${MAX_ACP_BODY_BYTES / (1024 * 1024)} MiB, a prompt of ${MAX_STDIN_PROMPT_BYTES} bytes as JSON`);
  }
  return { text, fromStdin: true };
}

/** `stream` read to its end as UTF-8, or undefined as soon as it is over `limit` bytes (the rest is not read). */
async function readBounded(stream: NodeJS.ReadableStream, limit: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of stream) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    bytes += buf.length;
    // Leaving the loop destroys the stream: nothing more is read, nor held.
    if (bytes > limit) return undefined;
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}
