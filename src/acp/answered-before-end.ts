/**
 * Every request read before stdin ends is answered before the connection closes.
 *
 * The SDK closes the connection as soon as its input is done, aborting the requests it is still
 * serving: their answers are never written. Until 2026-12-07 a script that piped `initialize` and
 * `session/list` and closed stdin got the first answer only, and the agent exited 0: nothing said
 * an answer was lost. Here the input the SDK reads ends only once every request passed to it has
 * been answered. `onEnd` runs once, as the input ends: the agent cancels its turns then (a prompt
 * is answered `cancelled`; docs/editors.md), so that an editor that ends stdin to quit is not kept
 * waiting, and neither is a turn waiting for an answer of the client's (a permission, a file): the
 * agent's requests to the client are withdrawn with the turn that made them (client-bridges.ts).
 *
 * Nor does the input end as the last answer goes out: `beforeClose` runs first (the agent stops its
 * sessions there), and the SDK's input ends once it has settled. The SDK refuses every message once
 * its input has ended ("ACP connection closed"): until 2026-12-07 what the agent sent after the last
 * answer (a new session's `available_commands_update`, sent the next turn of the loop) was dropped.
 */
import type * as acp from '@agentclientprotocol/sdk';

type Message = acp.AnyMessage;
type Id = string | number | null;

/** A request by the SDK's own test (`isRequestMessage`, sdk:dist/core/jsonrpc.js): one it answers once, with its id. */
function requestId(m: Message): { id: Id } | undefined {
  const r = m as { jsonrpc?: unknown; id?: unknown; method?: unknown };
  if (r.jsonrpc !== '2.0' || typeof r.method !== 'string' || !('id' in r)) return undefined;
  const id = r.id;
  return id === null || typeof id === 'string' || typeof id === 'number' ? { id } : undefined;
}

/** A response's id (no `method`), or undefined. */
function responseId(m: Message): { id: Id } | undefined {
  const r = m as { id?: unknown; method?: unknown };
  if ('method' in r || !('id' in r)) return undefined;
  const id = r.id;
  return id === null || typeof id === 'string' || typeof id === 'number' ? { id } : undefined;
}

export interface EndOfInput {
  /** Runs once, as the input ends. */
  onEnd(): void;
  /** Runs once the input has ended and every request has been answered; the SDK's input ends when it settles. */
  beforeClose(): Promise<void>;
}

/** `stream` whose input ends once every request read from it has been answered, and `beforeClose` has run (see the module comment). */
export function answeredBeforeEnd(stream: acp.Stream, { onEnd, beforeClose }: EndOfInput): acp.Stream {
  // The requests being served: counts by id, as JSON (a misbehaving client may reuse an id while
  // its first request runs).
  const serving = new Map<string, number>();
  let ended = false;
  let drained: (() => void) | undefined;
  const settleIfDone = () => {
    if (ended && serving.size === 0) drained?.();
  };

  const readable = stream.readable.pipeThrough(
    new TransformStream<Message, Message>({
      transform(m, controller) {
        const request = requestId(m);
        if (request) {
          const key = JSON.stringify(request.id);
          serving.set(key, (serving.get(key) ?? 0) + 1);
        }
        controller.enqueue(m);
      },
      flush() {
        ended = true;
        onEnd();
        return new Promise<void>((resolve) => {
          drained = resolve;
          settleIfDone();
        }).then(beforeClose);
      },
    }),
  );
  const writer = stream.writable.getWriter();
  const writable = new WritableStream<Message>({
    write(m) {
      const response = responseId(m);
      const key = response && JSON.stringify(response.id);
      const count = key !== undefined ? serving.get(key) : undefined;
      if (count !== undefined) {
        if (count > 1) serving.set(key!, count - 1);
        else serving.delete(key!);
      }
      const written = writer.write(m);
      // Closed once the last answer has reached the output (which the agent flushes as it stops).
      void written.then(settleIfDone, settleIfDone);
      return written;
    },
    close: () => writer.close(),
    abort: (reason) => writer.abort(reason),
  });
  return { readable, writable };
}
