/**
 * The fetch an HTTP or SSE MCP server is reached through (spec/tools.md §7): it reads at most
 * `limit` bytes of one message. The SDK reads a JSON response whole (`response.json()`), a refusal's
 * body whole (`response.text()`), and an event of an event stream whole (eventsource-parser keeps
 * its data until the blank line that ends it), with no limit: a server that sent hundreds of MiB
 * held them all in the agent's memory, and with it every session of the editor. Its stdio transport
 * has a limit of its own (STDIO_MAX_MESSAGE_BYTES), which this one matches.
 *
 * Over the limit, the body fails with an OverlongMessageError and `onOverlong` is told, once: the
 * server is then disconnected (the SDK retries an event stream that fails, so failing the body alone
 * would not stop it).
 */

/** The error a body over the limit fails with (what the SDK then reports; `onOverlong` says why). */
class OverlongMessageError extends Error {
  constructor(readonly limit: number) {
    super(`an MCP server's message exceeded ${limit} bytes`);
    this.name = 'OverlongMessageError';
  }
}

export function boundedFetch(limit: number, onOverlong: () => void, base: typeof fetch = fetch): typeof fetch {
  let told = false;
  const over = () => {
    const err = new OverlongMessageError(limit);
    if (!told) {
      told = true;
      onOverlong();
    }
    return err;
  };
  return async (input, init) => {
    const response = await base(input, init);
    if (!response.body) return response;
    const eventStream = /^\s*text\/event-stream\b/i.test(response.headers.get('content-type') ?? '');
    const bounded = response.body.pipeThrough(eventStream ? perEvent(limit, over) : whole(limit, over));
    let wrapped: Response;
    try {
      wrapped = new Response(bounded, { status: response.status, statusText: response.statusText, headers: response.headers });
    } catch {
      // A status that cannot carry a body (a 204, a 304): nothing to bound.
      return response;
    }
    // The SDK names a redirect's target from the response's url.
    Object.defineProperty(wrapped, 'url', { value: response.url });
    Object.defineProperty(wrapped, 'redirected', { value: response.redirected });
    return wrapped;
  };
}

/** A body that is one message (a JSON response, a refusal's page): at most `limit` bytes in all. */
function whole(limit: number, over: () => Error): TransformStream<Uint8Array, Uint8Array> {
  let bytes = 0;
  return new TransformStream({
    transform(chunk, controller) {
      bytes += chunk.byteLength;
      if (bytes > limit) controller.error(over());
      else controller.enqueue(chunk);
    },
  });
}

const CR = 0x0d;
const LF = 0x0a;

/**
 * An event stream: at most `limit` bytes from one event's start to the blank line that ends it
 * (a line ends at CR, LF or CRLF, as the event-stream format says). The bytes counted include the
 * field names, so an event counts a little more than its data: the limit is on what is held.
 */
function perEvent(limit: number, over: () => Error): TransformStream<Uint8Array, Uint8Array> {
  let bytes = 0;
  let atLineStart = true;
  let afterCR = false;
  return new TransformStream({
    transform(chunk, controller) {
      for (let i = 0; i < chunk.length; i++) {
        const b = chunk[i]!;
        if (b === LF && afterCR) {
          afterCR = false; // the LF of a CRLF: the line has ended already
          continue;
        }
        afterCR = b === CR;
        if (b === CR || b === LF) {
          if (atLineStart) bytes = 0; // a blank line: the event has ended
          atLineStart = true;
          continue;
        }
        atLineStart = false;
        if (++bytes > limit) {
          controller.error(over());
          return;
        }
      }
      controller.enqueue(chunk);
    },
  });
}
