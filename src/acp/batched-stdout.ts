/**
 * The agent's outgoing messages as NDJSON on stdout, one write per event-loop turn. The SDK's own
 * ndJsonStream writer does one write (and one promise chain) per message, which dominates a
 * `session/load` replay of a long session; batching keeps the order and the backpressure (a full
 * pipe makes the next message wait for 'drain') and costs one write per burst instead.
 */
import type * as acp from '@agentclientprotocol/sdk';

export interface BatchedWriter {
  writable: WritableStream<acp.AnyMessage>;
  /** Writes what is pending now and waits until the pipe has taken it. */
  flush(): Promise<void>;
  /**
   * Queues ready-made NDJSON lines (each ending in a newline) behind every message the stream has
   * taken so far, with the same backpressure: a `session/load` replay serializes its updates itself
   * instead of handing each to the SDK's per-message write chain.
   */
  writeLines(text: string): Promise<void>;
}

export function batchedStdout(out: NodeJS.WritableStream = process.stdout): BatchedWriter {
  let pending: string[] = [];
  let scheduled = false;
  let drained: Promise<void> = Promise.resolve();
  const schedule = () => {
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const text = pending.join('');
    pending = [];
    if (!out.write(text)) drained = new Promise((resolve) => out.once('drain', resolve));
  };
  return {
    writable: new WritableStream<acp.AnyMessage>({
      async write(message) {
        await drained;
        // JSON.stringify never emits a raw newline, so each message stays on its own line.
        pending.push(JSON.stringify(message) + '\n');
        schedule();
      },
      close: () => flush(),
    }),
    async flush() {
      flush();
      await drained;
    },
    async writeLines(text) {
      await drained;
      pending.push(text);
      schedule();
    },
  };
}
