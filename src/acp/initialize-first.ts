/**
 * Requests a client pipelines behind its `initialize` are served once that `initialize` has been
 * answered, in the order they were sent.
 *
 * The SDK dispatches every inbound message at once and opens its initialization gate only when the
 * `initialize` response goes out (`agentInitializationGate`, sdk:dist/v1/stable/acp.js). A client
 * that wrote `initialize` and `session/new` in one go (a line each, without waiting) therefore had
 * its `session/new` refused with -32600 "must be initialized", and that refusal even went out
 * before the `initialize` answer: the client did initialize first, in the only order a stream has.
 * Here everything read after an `initialize` request waits until its answer has been written, then
 * reaches the SDK as it came. A request with no `initialize` before it still meets the SDK's gate
 * (-32600 invalid_request); so do the ones behind an `initialize` that failed.
 */
import type * as acp from '@agentclientprotocol/sdk';

type Message = acp.AnyMessage;

const isInitialize = (m: Message): m is Message & { id: string | number } => 'method' in m && m.method === 'initialize' && 'id' in m;

/** `stream` with what follows each `initialize` held back until that `initialize` has been answered. */
export function initializeFirst(stream: acp.Stream): acp.Stream {
  /** The `initialize` being answered, if one is. */
  let answering: { id: string | number } | undefined;
  const held: Message[] = [];
  let out!: TransformStreamDefaultController<Message>;
  let ended: (() => void) | undefined;
  const take = (m: Message) => {
    if (answering) return void held.push(m);
    if (isInitialize(m)) answering = { id: m.id };
    out.enqueue(m);
  };
  const answered = () => {
    answering = undefined;
    while (held.length && !answering) take(held.shift()!);
    if (!answering) ended?.();
  };
  const readable = stream.readable.pipeThrough(
    new TransformStream<Message, Message>({
      start: (controller) => void (out = controller),
      transform: take,
      // Input that ends (the client closed stdin) after a pipelined request still gets it served.
      flush: () => (answering ? new Promise<void>((resolve) => (ended = resolve)) : undefined),
    }),
  );
  const writer = stream.writable.getWriter();
  const writable = new WritableStream<Message>({
    write(m) {
      const written = writer.write(m);
      // The SDK records a successful initialize before it writes the answer: what is let through now
      // finds the connection initialized.
      if (answering && !('method' in m) && 'id' in m && m.id === answering.id) answered();
      return written;
    },
    close: () => writer.close(),
    abort: (reason) => writer.abort(reason),
  });
  return { readable, writable };
}
