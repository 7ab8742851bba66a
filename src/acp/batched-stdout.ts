/**
 * The agent's outgoing messages as NDJSON on stdout, one write per event-loop turn (or per
 * FLUSH_AT_CHARS of a longer burst). The SDK's own ndJsonStream writer does one write (and one
 * promise chain) per message, which dominates a `session/load` replay of a long session; batching
 * keeps the order and the backpressure (a full pipe makes the SDK's next message wait for 'drain')
 * and costs one write per burst instead.
 *
 * A response (to a request of the client's) is written at once, with everything queued before it:
 * the client is waiting for it, and what else runs in this turn of the loop (the log's writes, the
 * control channel) would delay it by a fraction of a millisecond for nothing.
 *
 * `lines()` is the direct path for live `session/update`s, already serialized: the SDK's per-message
 * promise chain and WritableStream cost several times what the update itself does. Everything, SDK
 * message or direct line, is queued in the order it reaches this writer. `writeLines()` is the same
 * path with backpressure for a `session/load` replay, which serializes its updates itself and must
 * not outrun a pipe nobody drains.
 */
import type * as acp from '@agentclientprotocol/sdk';
import { lineWithWireCode, withWireCode } from './wire-error-code.js';

export interface BatchedWriter {
  writable: WritableStream<acp.AnyMessage>;
  /** Queues NDJSON text (complete lines, each ending in '\n') behind everything queued so far. */
  lines(text: string): void;
  /** `lines()`, resolving once the pipe has taken everything written before (backpressure). */
  writeLines(text: string): Promise<void>;
  /** Writes what is pending now and waits until the pipe has taken it. */
  flush(): Promise<void>;
  /**
   * Whole NDJSON messages as bytes, for the SDK's own stdin framing (the answers it makes itself to
   * a line it cannot parse): queued and written at once like any response, so that stdout has one
   * writer and keeps the order messages were made in.
   */
  bytes: WritableStream<Uint8Array>;
  /**
   * Resolves when the pipe fails (EPIPE: the client closed its end, or exited). From then on
   * output is dropped and nothing waits for a 'drain' that will not come.
   */
  broken: Promise<Error>;
}

/**
 * Pending text that is written at once rather than at the end of the loop turn. A fast model's reply
 * (or the offline model's) can be thousands of updates produced without yielding to the loop: held
 * to the end, its first update would reach the client only once the last was made, and a daemon
 * relaying it could only start then. Written in slices this size, the reader relays while the agent
 * goes on producing (a pipe holds 64 KiB; a slice is still hundreds of updates per write).
 */
export const FLUSH_AT_CHARS = 32 * 1024;

/**
 * `beforeWrite` runs before each write: the agent writes its logs' pending events there, so that no
 * event reaches a client before it is in its log's file (src/store/unwritten-logs.ts).
 */
export function batchedStdout(out: NodeJS.WritableStream = process.stdout, beforeWrite: () => void = () => undefined): BatchedWriter {
  let pending = '';
  let scheduled = false;
  let drained: Promise<void> = Promise.resolve();
  // One 'drain' wait at a time: a fast reply keeps writing slices into a full pipe, and a listener
  // per write would pile up (Node warns past ten) while they all wait for the same event.
  let waitingForDrain = false;
  let drainedNow: (() => void) | undefined;
  let failure: Error | undefined;
  const broken = new Promise<Error>((resolve) =>
    // Every error, not once: writes after the first one fail too, and an 'error' nobody listens to
    // ends the process.
    out.on('error', (err: Error) => {
      if (failure) return;
      failure = err;
      pending = '';
      drainedNow?.();
      resolve(err);
    }),
  );
  const write = () => {
    if (pending.length === 0) return;
    beforeWrite();
    // (A log that failed there may have queued and written answers already.)
    if (pending.length === 0) return;
    const text = pending;
    pending = '';
    if (failure) return;
    if (out.write(text) || waitingForDrain) return;
    waitingForDrain = true;
    drained = new Promise((resolve) => {
      drainedNow = () => {
        waitingForDrain = false;
        drainedNow = undefined;
        resolve();
      };
      out.once('drain', drainedNow);
    });
  };
  const flush = () => {
    scheduled = false;
    write();
  };
  const queue = (text: string) => {
    pending += text;
    if (pending.length >= FLUSH_AT_CHARS) write();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  const decoder = new TextDecoder();
  return {
    bytes: new WritableStream<Uint8Array>({
      write(chunk) {
        // One whole message per chunk (the SDK's ndJsonStream writes each line at once), all errors.
        queue(lineWithWireCode(decoder.decode(chunk, { stream: true })));
        write();
        return drained;
      },
    }),
    writable: messageSink({
      write(message) {
        // Queued at once, so that it keeps its place among direct lines; the SDK's next message
        // waits for the pipe to drain (backpressure).
        // JSON.stringify never emits a raw newline, so each message stays on its own line. An error
        // the SDK made itself gets its string code here (wire-error-code.ts).
        queue(JSON.stringify('error' in message ? withWireCode(message) : message) + '\n');
        // A response is what a client is waiting for, and it ends a burst rather than starting one:
        // it leaves now with whatever is queued before it, not after the rest of this loop turn.
        if (!('method' in message)) write();
        return drained;
      },
      close: async () => flush(),
    }),
    lines(text) {
      if (text.length > 0) queue(text);
    },
    writeLines(text) {
      if (text.length > 0) queue(text);
      return drained;
    },
    async flush() {
      flush();
      await drained;
    },
    broken,
  };
}

/**
 * The SDK writes each message through a writer it takes and releases (`getWriter()`, `write()`,
 * `releaseLock()`; `close()` and `abort()` at the end, `locked` checked first). On a WritableStream
 * every release makes a TypeError to reject the released writer's promises with, and every write
 * goes through the stream's queue and promise chain: several µs per message, for a sink that takes
 * each message synchronously anyway. This is the same surface, with one writer that is never
 * locked. (The SDK's own code, 2.4.0: core/jsonrpc.js `sendMessage`, protocol-router.js.)
 */
function messageSink(sink: { write(message: acp.AnyMessage): Promise<void>; close(): Promise<void> }): WritableStream<acp.AnyMessage> {
  let closed = false;
  const writer = {
    write: (message: acp.AnyMessage) => (closed ? Promise.reject(new TypeError('the agent output is closed')) : sink.write(message)),
    close: () => ((closed = true), sink.close()),
    abort: async () => void (closed = true),
    releaseLock: () => undefined,
  };
  return { locked: false, getWriter: () => writer } as unknown as WritableStream<acp.AnyMessage>;
}
