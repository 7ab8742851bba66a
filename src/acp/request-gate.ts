/**
 * When the SDK gets to read what the client sent, and when its input ends.
 *
 * - Requests a client pipelines behind its `initialize` are served once that `initialize` has been
 *   answered, in the order they were sent. The SDK dispatches every inbound message at once and opens
 *   its initialization gate only when the `initialize` response goes out (`agentInitializationGate`,
 *   sdk:dist/v1/stable/acp.js): a client that wrote `initialize` and `session/new` in one go had its
 *   `session/new` refused with -32600 "must be initialized", the refusal even before the `initialize`
 *   answer. Here nothing more is read after an `initialize` request until its answer has been
 *   written. A request with no `initialize` before it still meets the SDK's gate (-32600
 *   invalid_request); so do the ones behind an `initialize` that failed.
 * - Every request read before stdin ends is answered before the connection closes. The SDK closes
 *   the connection as soon as its input is done, aborting the requests it is still serving: until
 *   2026-12-07 a script that piped `initialize` and `session/list` and closed stdin got the first
 *   answer only, and the agent exited 0. Here the SDK's input ends only once every request it was
 *   given has been answered. `onEnd` runs once, as the input ends: the agent cancels its turns then
 *   (a prompt is answered `cancelled`; docs/editors.md), so that an editor that ends stdin to quit is
 *   not kept waiting, and neither is a turn waiting for an answer of the client's (a permission, a
 *   file): the agent's requests to the client are withdrawn with the turn that made them
 *   (client-bridges.ts).
 * - Nor does the input end as the last answer goes out: `beforeClose` runs first (the agent stops its
 *   sessions there), and the SDK's input ends once it has settled. The SDK refuses every message once
 *   its input has ended ("ACP connection closed"): until 2026-12-07 what the agent sent after the
 *   last answer (a new session's `available_commands_update`, sent the next turn of the loop) was
 *   dropped.
 * - A message the SDK refuses -32600 under id null (one whose id is an object) is no answer to a
 *   request with id null: the refusals due are counted apart from the requests being served. Until
 *   2026-12-07 such a refusal counted as the answer of a request served under null, and at stdin's
 *   end the input ended while that request still ran: its answer was lost.
 * - Answers are told apart by id alone. A client that reuses an id while a request under it is still
 *   served (JSON-RPC forbids it; id null is the usual one) can have one's answer taken for the other's:
 *   an `initialize` under null sent behind a running request under null is taken as answered when
 *   that request's answer goes out, and what follows it is read before its own answer. Not guarded
 *   (2026-12-07): troupe's handlers fail by nothing of it (before the connection is initialized the
 *   SDK refuses every other request before the next is read), and renaming such requests for the SDK
 *   would hide them from a `$/cancel_request` naming the client's id.
 * - A request whose id is a number troupe cannot answer under exactly (a fraction, `1.5`, or an
 *   integer past ±(2^53 − 1), `9007199254740993`, which parses as …992) never reaches the SDK: it is
 *   answered -32600 (`invalid_request`) with id null, as the SDK answers an id that is an object, and
 *   as the daemon answers these (isRequestId, src/wire/request-id.ts; spec/transport.md §1). The SDK
 *   takes any finite number: until 2026-12-07 `1.5` was served and answered under it, no ACP id,
 *   and 9007199254740993 answered under 9007199254740992, an id the client never sent.
 *
 * The SDK takes one reader of the stream's `readable` and, per message, a writer of its `writable`,
 * and uses nothing else of them (sdk 2.4.0 core/jsonrpc.js `receive`, `sendMessage`): the two here
 * are plain objects over the stream's own reader and writer, not streams (nor a TransformStream and
 * its pipe) of their own. They were two wrappers, each with a stream per direction, until
 * 2026-12-07: the first release of a real web stream's lock makes Node build a second V8 realm (to
 * strip the stack of the error it rejects the released writer's promises with), some 0.2 MB kept
 * for good (bench/README.md, "What it was").
 */
import type * as acp from '@agentclientprotocol/sdk';
import { TroupeError } from '../core/errors.js';
import { isRequestId } from '../wire/request-id.js';

type Message = acp.AnyMessage;
type Id = string | number | null;
type Read = ReadableStreamReadResult<Message>;

const DONE: Read = { done: true, value: undefined };

export interface EndOfInput {
  /** Runs once, as the input ends. */
  onEnd(): void;
  /** Runs once the input has ended and every request has been answered; the SDK's input ends when it settles. */
  beforeClose(): Promise<void>;
}

/** A request by the SDK's own test (`isRequestMessage`, sdk:dist/core/jsonrpc.js): one it answers once, with its id. */
function requestId(m: Message): { id: Id } | undefined {
  const r = m as { jsonrpc?: unknown; id?: unknown; method?: unknown };
  if (r.jsonrpc !== '2.0' || typeof r.method !== 'string' || !('id' in r)) return undefined;
  return isId(r.id) ? { id: r.id } : undefined;
}

/** A response's id (no `method`), or undefined. */
function responseId(m: Message): { id: Id } | undefined {
  const r = m as { id?: unknown; method?: unknown };
  if ('method' in r || !('id' in r)) return undefined;
  return isId(r.id) ? { id: r.id } : undefined;
}

const isId = (id: unknown): id is Id => id === null || typeof id === 'string' || typeof id === 'number';

/**
 * A message the SDK refuses with -32600 under id null, as it reads it (`receiveUnvalidatedMessage`,
 * sdk:dist/core/jsonrpc.js): neither a request nor a notification nor shaped as a response, such as
 * one whose id is an object. (What is no object at all never reaches the gate: the SDK's line
 * reader answers it itself, straight to the output.)
 */
function refusedBySdk(m: Message): boolean {
  const r = m as { jsonrpc?: unknown; id?: unknown; method?: unknown; result?: unknown; error?: unknown };
  const notification = r.jsonrpc === '2.0' && typeof r.method === 'string' && !('id' in r);
  const responseShaped = !('method' in r) && ('id' in r || 'result' in r || 'error' in r);
  return !requestId(m) && !notification && !responseShaped;
}

/** The SDK's refusal of such a message, as it writes it. */
function isRefusal(m: Message): boolean {
  const r = m as { id?: unknown; method?: unknown; error?: { code?: unknown } };
  return !('method' in r) && r.id === null && r.error?.code === -32600;
}

/** A request the SDK would serve under a number troupe does not take as an id (see the module comment). */
function hasUnanswerableId(m: Message): boolean {
  const r = m as { id?: unknown; method?: unknown };
  return typeof r.method === 'string' && typeof r.id === 'number' && !isRequestId(r.id);
}

/** Its answer: written as the SDK writes its own -32600 for an invalid request, with id null. */
const UNANSWERABLE_ID: Message = {
  jsonrpc: '2.0',
  id: null,
  error: new TroupeError('invalid_request', 'Invalid request: a numeric request id must be an integer within ±(2^53 − 1), which the answer carries exactly').toRpc(),
};

/** `stream` as the SDK should read it (see the module comment). */
export function requestGate(stream: acp.Stream, { onEnd, beforeClose }: EndOfInput): acp.Stream {
  const source = stream.readable.getReader();
  const sink = stream.writable.getWriter();
  // The requests being served: counts by id, as JSON (a misbehaving client may reuse an id while
  // its first request runs).
  const serving = new Map<string, number>();
  // The SDK's refusals still to be written, counted apart: one goes out under id null, and is no
  // answer to a request being served under null (which would otherwise be taken as answered, and
  // the input ended while it still ran, its answer lost).
  let refusals = 0;
  /** The `initialize` being answered, if one is, and the read that waits for its answer. */
  let answering: { id: Id; answered?: () => void } | undefined;
  let ended = false;
  let drained: (() => void) | undefined;
  /** The SDK's read in progress, ended at once if the SDK closes the connection meanwhile. */
  let reading: ((r: Read) => void) | undefined;
  let cancelled = false;

  const settleIfDone = () => {
    if (ended && serving.size === 0 && refusals === 0) drained?.();
  };
  const end = async (): Promise<Read> => {
    ended = true;
    onEnd();
    await new Promise<void>((resolve) => {
      drained = resolve;
      settleIfDone();
    });
    await beforeClose();
    return DONE;
  };
  const next = async (): Promise<Read> => {
    if (answering) await new Promise<void>((resolve) => (answering!.answered = resolve));
    for (;;) {
      const read = await source.read();
      if (cancelled) return DONE;
      if (read.done) return end();
      if (hasUnanswerableId(read.value)) {
        // Straight to the output, not through `writer`: an answer with id null is no answer to a
        // request being served under null. (A write that fails is the output's loss, seen there.)
        void sink.write(UNANSWERABLE_ID).catch(() => undefined);
        continue;
      }
      if (refusedBySdk(read.value)) refusals += 1;
      const request = requestId(read.value);
      if (request) {
        const key = JSON.stringify(request.id);
        serving.set(key, (serving.get(key) ?? 0) + 1);
        if ((read.value as { method: string }).method === 'initialize') answering = { id: request.id };
      }
      return read;
    }
  };

  const reader = {
    read: () =>
      new Promise<Read>((resolve, reject) => {
        reading = resolve;
        next().then(resolve, reject);
      }).finally(() => (reading = undefined)),
    releaseLock: () => undefined,
    async cancel(reason?: unknown) {
      cancelled = true;
      reading?.(DONE);
      await source.cancel(reason);
    },
  };
  const writer = {
    write(m: Message) {
      // The SDK writes a refusal as it reads the message, ahead of any answer to what comes after it
      // (its writes are queued in order): one pending is taken to be this one.
      const refusal = refusals > 0 && isRefusal(m);
      if (refusal) refusals -= 1;
      const response = refusal ? undefined : responseId(m);
      if (response) {
        const key = JSON.stringify(response.id);
        const count = serving.get(key);
        if (count !== undefined) {
          if (count > 1) serving.set(key, count - 1);
          else serving.delete(key);
        }
        // The SDK records a successful initialize before it writes the answer: what is read from now
        // finds the connection initialized.
        if (answering && answering.id === response.id) {
          const { answered } = answering;
          answering = undefined;
          answered?.();
        }
      }
      const written = sink.write(m);
      // The input ends once the last answer has reached the output.
      if (response || refusal) void written.then(settleIfDone, settleIfDone);
      return written;
    },
    close: () => sink.close(),
    abort: (reason?: unknown) => sink.abort(reason),
    releaseLock: () => undefined,
  };
  return {
    readable: { locked: false, getReader: () => reader } as unknown as ReadableStream<Message>,
    writable: { locked: false, getWriter: () => writer } as unknown as WritableStream<Message>,
  };
}
