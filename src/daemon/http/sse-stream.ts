/**
 * A server-sent-events response for management routes (`res.sse()`): `id:`/`event:` fields,
 * keep-alive comments, and backpressure: `send` resolves once the client has taken enough that
 * fewer than `maxBufferedBytes` wait in this process.
 */
import type { HttpExchange } from './http-exchange.js';

/** Open management event streams at once, unless `troupe serve --max-streams` says otherwise. */
export const DEFAULT_MAX_SSE_STREAMS = 256;

export interface SseEventOptions {
  /** Written as the `id:` field; clients send the last one back as `Last-Event-ID` on reconnect. */
  id?: string | number;
  event?: string;
}

export interface SseStreamOptions {
  keepAliveMs: number;
  maxBufferedBytes: number;
}

/** Frames one event. Data is split on line breaks so that every line gets its own `data:` prefix. */
export function sseFrame(data: string, options: SseEventOptions = {}): string {
  let frame = '';
  if (options.id !== undefined) frame += `id: ${String(options.id).replace(/[\r\n]/g, '')}\n`;
  if (options.event !== undefined) frame += `event: ${options.event.replace(/[\r\n]/g, '')}\n`;
  for (const line of data.split(/\r\n|\r|\n/)) frame += `data: ${line}\n`;
  return frame + '\n';
}

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  'X-Accel-Buffering': 'no',
};

export class SseStream {
  /** The `Last-Event-ID` the client sent, if any: where a resuming client left off. */
  readonly lastEventId: string | undefined;
  private readonly queue: string[] = [];
  private queuedBytes = 0;
  private blocked = false;
  private closedFlag = false;
  /** close() was called: nothing more is taken, and the response ends once the queue is written. */
  private closing = false;
  private lastWriteAt = Date.now();
  /** Bytes taken by `send` since the producer last waited for a turn of the loop. */
  private sentSinceTurn = 0;
  private readonly waiters: Array<() => void> = [];
  private readonly closeHandlers: Array<() => void> = [];
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly exchange: HttpExchange, private readonly options: SseStreamOptions, headers: Record<string, string> = {}) {
    this.lastEventId = exchange.header('last-event-id');
    exchange.onAbort(() => this.finish());
    exchange.onDrain(() => {
      this.blocked = false;
      this.pump();
    });
    this.blocked = !exchange.startEventStream(200, { ...SSE_HEADERS, ...headers }, ':\n\n');
    this.timer = setInterval(() => this.keepAlive(), Math.max(10, Math.floor(options.keepAliveMs / 2)));
    this.timer.unref();
    // Answered already (a HEAD request): nothing will be sent, so the stream's producer must stop.
    if (exchange.ended) this.finish();
  }

  /** Bytes of events waiting in this process for the socket to take them (for /metrics). */
  get queued(): number {
    return this.queuedBytes;
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  onClose(fn: () => void): void {
    if (this.closedFlag) fn();
    else this.closeHandlers.push(fn);
  }

  /**
   * Sends one event. Objects are JSON-encoded. Resolves when there is room again (or the stream
   * closed), and, after every `maxBufferedBytes` sent, on the loop's next turn: a client that takes
   * everything at once (a fast reader on loopback) never makes the socket push back, and its
   * producer, awaiting only settled promises, held the loop until it had nothing left to send. Until
   * 2026-12-06 the replay of a 512 MiB log held it for 3.7 s, every other client waiting.
   */
  send(data: unknown, options: SseEventOptions = {}): Promise<void> {
    if (this.closedFlag || this.closing) return Promise.resolve();
    const frame = sseFrame(typeof data === 'string' ? data : JSON.stringify(data), options);
    this.queue.push(frame);
    this.queuedBytes += frame.length;
    this.sentSinceTurn += frame.length;
    this.pump();
    if (this.closedFlag) return Promise.resolve();
    if (this.queuedBytes >= this.options.maxBufferedBytes) {
      this.sentSinceTurn = 0; // the drain it waits for comes on a later turn
      return new Promise((resolve) => this.waiters.push(resolve));
    }
    if (this.sentSinceTurn < this.options.maxBufferedBytes) return Promise.resolve();
    this.sentSinceTurn = 0;
    return new Promise((resolve) => setImmediate(resolve));
  }

  /** Sends a comment line (ignored by clients). */
  comment(text = ''): void {
    if (this.closedFlag || this.closing) return;
    this.queue.push(`:${text.replace(/[\r\n]/g, ' ')}\n\n`);
    this.queuedBytes += text.length + 3;
    this.pump();
  }

  /**
   * Ends the response cleanly after what was already sent: events still waiting for the socket go
   * first (the last of a feed, its replay_gap), then the response ends. Until 2026-12-06 they were
   * dropped, up to `maxBufferedBytes` of them, from a reader that was behind. A reader that takes
   * nothing more is closed by the server's HTTP timeout, which ends the wait.
   */
  close(): void {
    if (this.closedFlag || this.closing) return;
    this.closing = true;
    this.endIfDrained();
  }

  /** Closes the socket at once, dropping what waits: for a client that stopped reading. */
  abort(): void {
    if (this.closedFlag) return;
    this.exchange.destroy();
    this.finish();
  }

  private pump(): void {
    if (this.blocked || this.closedFlag || this.queue.length === 0) return;
    this.exchange.cork(() => {
      while (!this.blocked && this.queue.length > 0) {
        const frame = this.queue.shift()!;
        this.queuedBytes -= frame.length;
        this.blocked = !this.exchange.write(frame);
      }
    });
    this.lastWriteAt = Date.now();
    if (this.queuedBytes < this.options.maxBufferedBytes) for (const w of this.waiters.splice(0)) w();
    this.endIfDrained();
  }

  private endIfDrained(): void {
    if (!this.closing || this.closedFlag || this.queue.length > 0) return;
    this.exchange.endStream();
    this.finish();
  }

  private keepAlive(): void {
    if (!this.blocked && this.queue.length === 0 && Date.now() - this.lastWriteAt >= this.options.keepAliveMs) {
      // From a timer, outside any uWS callback: corked, as uWS asks of every write (it warned, once per process).
      this.exchange.cork(() => (this.blocked = !this.exchange.write(':\n\n')));
      this.lastWriteAt = Date.now();
    }
  }

  private finish(): void {
    if (this.closedFlag) return;
    this.closedFlag = true;
    clearInterval(this.timer);
    this.queue.length = 0;
    this.queuedBytes = 0;
    for (const w of this.waiters.splice(0)) w();
    for (const fn of this.closeHandlers.splice(0)) fn();
  }
}
