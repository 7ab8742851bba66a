/**
 * A line on stdin over the message limit is answered, not fatal. The SDK's ndJsonStream errors the
 * whole connection on a line over its limit (32 MiB), and until 2026-12-06 the agent then stopped,
 * every session of the editor with it: one pasted image too many took the window's agent down.
 * Here a line is passed on only once it is whole and within the limit; one over it is dropped as
 * it arrives (never held whole in memory) and answered by what its start says it was:
 * - a request (`id` and `method`): its error, `payload_too_large` (-32055), to the client, with
 *   its id, so that the client's request ends;
 * - a response to a request of the agent's (`id`, no `method`: a file the editor read for a tool
 *   call, say): an error response in its place, so that the agent's request fails with the reason
 *   (the tool call fails, the turn goes on);
 * - anything else (a notification, no `id` among its first bytes, or one that is no request id troupe
 *   takes: a fraction, an integer past ±(2^53 − 1)): an error with `id: null`.
 * Each is also a warning on stderr.
 */
import { TroupeError } from '../core/errors.js';
import { MAX_LINE_BYTES } from '../wire/ndjson-limits.js';
import { isRequestId } from '../wire/request-id.js';

/** How much of a dropped line's start is kept to find its `id` and `method`. */
const HEAD_BYTES = 4096;
const NEWLINE = 0x0a;

/** A line that was dropped: what its start said, and its size (at least). */
export interface DroppedLine {
  id: string | number | undefined;
  method: string | undefined;
  /** A response (`result` or `error`, no `method`) rather than a request or notification. */
  response: boolean;
  bytes: number;
}

export interface OversizedLineHandlers {
  /** Writes a whole NDJSON line to the client, behind what was sent before. */
  answer(line: string): void;
  warn(message: string, fields: Record<string, unknown>): void;
}

/** `input` with every line over `limit` bytes taken out and answered (see the module comment). */
export function boundedLines(input: ReadableStream<Uint8Array>, handlers: OversizedLineHandlers, limit = MAX_LINE_BYTES): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  // The current line, not yet whole: its chunks (passed on once its end comes), or, over the limit,
  // only its start and size.
  let held: Uint8Array[] = [];
  let heldBytes = 0;
  let dropping: { head: Uint8Array; headBytes: number; bytes: number } | undefined;

  const dropped = (controller: TransformStreamDefaultController<Uint8Array>) => {
    const head = new TextDecoder().decode(dropping!.head.subarray(0, dropping!.headBytes));
    const members = topLevelMembers(head);
    const method = members.get('method');
    const line: DroppedLine = {
      id: members.get('id'),
      method: typeof method === 'string' ? method : undefined,
      response: !members.has('method') && (members.has('result') || members.has('error')),
      bytes: dropping!.bytes,
    };
    dropping = undefined;
    const { reply, toAgent } = answerFor(line, limit);
    if (toAgent) controller.enqueue(encoder.encode(reply));
    else handlers.answer(reply);
    handlers.warn('a message over the size limit was not read', { bytes: line.bytes, limit, ...(line.id !== undefined ? { id: line.id } : {}), ...(line.method ? { method: line.method } : {}) });
  };
  /** Counts `part` into the dropped line, keeping its first HEAD_BYTES. */
  const grow = (line: { head: Uint8Array; headBytes: number; bytes: number }, part: Uint8Array) => {
    const take = part.subarray(0, HEAD_BYTES - line.headBytes);
    line.head.set(take, line.headBytes);
    line.headBytes += take.byteLength;
    line.bytes += part.byteLength;
  };
  const startDropping = (tail: Uint8Array) => {
    const line = { head: new Uint8Array(HEAD_BYTES), headBytes: 0, bytes: 0 };
    for (const part of held) grow(line, part);
    grow(line, tail);
    dropping = line;
    held = [];
    heldBytes = 0;
  };

  return input.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        let start = 0;
        while (start < chunk.byteLength) {
          const nl = chunk.indexOf(NEWLINE, start);
          const end = nl === -1 ? chunk.byteLength : nl;
          if (dropping) {
            grow(dropping, chunk.subarray(start, end));
          } else if (heldBytes + (end - start) > limit) {
            startDropping(chunk.subarray(start, end));
          } else if (nl === -1) {
            held.push(chunk.subarray(start));
            heldBytes += chunk.byteLength - start;
          } else {
            // A whole line within the limit: on, as it came (held chunks first).
            for (const part of held) controller.enqueue(part);
            held = [];
            heldBytes = 0;
            controller.enqueue(chunk.subarray(start, nl + 1));
          }
          if (nl === -1) return;
          if (dropping) dropped(controller);
          start = nl + 1;
        }
      },
      flush(controller) {
        if (dropping) dropped(controller);
        for (const part of held) controller.enqueue(part);
      },
    }),
  );
}

/** The NDJSON line that answers a dropped line, and whether it goes to the agent (as the client's response) or to the client. */
function answerFor(line: DroppedLine, limit: number): { reply: string; toAgent: boolean } {
  // An id troupe takes (isRequestId, as request-gate.ts asks of a line within the limit): a fraction
  // or an integer past ±(2^53 − 1) (which `Number` rounds) is answered with id null, never under a
  // number the client did not send (until 2026-12-07 it was, 9007199254740993 under …992).
  const id = line.id !== undefined && isRequestId(line.id) ? line.id : undefined;
  const isResponse = line.response && id !== undefined;
  const what = isResponse ? 'the response' : line.method ? `the ${line.method} ${line.id === undefined ? 'notification' : 'request'}` : 'a message';
  const error = new TroupeError('payload_too_large', `${what} was ${line.bytes} bytes, over the limit of ${limit} bytes for one message: it was not read`, {
    limit,
    ...(line.method ? { method: line.method } : {}),
  }).toRpc();
  const reply = `${JSON.stringify({ jsonrpc: '2.0', id: id ?? null, error })}\n`;
  return { reply, toAgent: isResponse };
}

/**
 * The top-level members of the JSON object that `head` starts, by key: a string or number value if
 * it is whole within `head`, else `undefined` (an object, or cut short). Cheap and forgiving: `head`
 * is the start of a line that is never parsed whole.
 */
export function topLevelMembers(head: string): Map<string, string | number | undefined> {
  const members = new Map<string, string | number | undefined>();
  let depth = 0;
  for (let i = 0; i < head.length; i++) {
    const c = head[i];
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (c === '"') {
      const end = stringEnd(head, i);
      if (end === -1) break;
      const colon = depth === 1 ? /^\s*:\s*/.exec(head.slice(end + 1, end + 64)) : null;
      const key = colon ? parse(head.slice(i, end + 1)) : undefined;
      if (typeof key === 'string' && !members.has(key)) members.set(key, valueAt(head, end + 1 + colon![0].length));
      i = end;
    }
  }
  return members;
}

function valueAt(head: string, at: number): string | number | undefined {
  if (head[at] === '"') {
    const end = stringEnd(head, at);
    return end === -1 ? undefined : (parse(head.slice(at, end + 1)) as string | undefined);
  }
  const number = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?=\s*[,}])/.exec(head.slice(at, at + 64));
  return number ? Number(number[0]) : undefined;
}

/** The index of the quote that ends the JSON string starting at `start`, or -1 if `head` ends first. */
function stringEnd(head: string, start: number): number {
  for (let i = start + 1; i < head.length; i++) {
    if (head[i] === '\\') i++;
    else if (head[i] === '"') return i;
  }
  return -1;
}

function parse(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
}
