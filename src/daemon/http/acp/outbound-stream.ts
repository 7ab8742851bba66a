/**
 * One outbound stream of a connection (the connection stream, one per session, or the WebSocket):
 * numbered events, a queue for output no receiver has taken yet, and a bounded window of delivered
 * events kept so that a client reconnecting with `Last-Event-ID` gets exactly what it missed.
 *
 * Event ids are contiguous per stream, from 1 (or on from a dropped stream's: see the constructor). Entries `firstId..nextId-1` are stored; those up to
 * `delivered` went out to some receiver (kept only for resume, trimmed to the retention limits),
 * the rest are pending and count toward the connection's buffered bytes. spec/transport.md §4.
 */
import { REPLAY_GAP_METHOD } from './acp-protocol.js';

/** Something that writes events to a client: an SSE response or a WebSocket. */
export interface StreamReceiver {
  /** Writes one event; false means the socket buffered it and `resume()` will follow a drain. */
  write(id: number, json: string): boolean;
  /**
   * Optional, for byte streams (SSE): the text of one event, and a write of several framed events
   * at once. The stream then writes up to {@link BATCH_CHARS} of events per socket write instead of
   * one write each (false: buffered, as for `write`).
   */
  frame?(id: number, json: string): string;
  writeFrames?(text: string): boolean;
  /** Writes a message outside the numbering (the replay-gap notice). */
  writeUnnumbered(json: string): boolean;
  /** Writes a keep-alive (SSE comment). */
  keepAlive(): boolean;
  cork(fn: () => void): void;
  /** Ends the receiver: gracefully if `graceful`, else by closing the socket. */
  end(graceful: boolean): void;
}

/** What a stream reports to its connection. */
export interface StreamHost {
  /** Bytes were taken from pending output by a receiver. */
  progress(bytes: number): void;
  /** Pending output grew by `bytes` (negative when discarded). */
  pendingChanged(bytes: number): void;
  /** Output kept for resume grew by `bytes` (negative when let go); the host may ask it back ({@link OutboundStream.shed}). */
  retainedChanged(bytes: number): void;
  now(): number;
}

/** Most text put in one socket write by a batching receiver (a socket write past this is not cheaper). */
export const BATCH_CHARS = 64 * 1024;

interface Entry {
  id: number;
  json: string;
}

export interface RetentionLimits {
  events: number;
  bytes: number;
}

export class OutboundStream {
  private entries: Entry[] = [];
  private head = 0;
  private nextId = 1;
  /** Highest id ever written to a receiver. */
  private delivered = 0;
  private retainedBytes = 0;
  /** `retainedBytes` as last told to the host. */
  private reportedRetained = 0;
  private receiverRef: StreamReceiver | undefined;
  /** Last id written to the current receiver. */
  private cursor = 0;
  private blocked = false;
  /** When `blocked` last became true. */
  private blockedAt = 0;
  private aborted = false;
  private pumpScheduled = false;
  lastWriteAt = 0;

  /**
   * `firstId`: 1, or, for a session's stream made again on a connection that dropped one before,
   * the id after the highest that connection used (AcpConnection.releaseSession): numbered from 1
   * again, an id the client kept from the dropped stream would resume this one in its middle.
   */
  constructor(readonly sessionId: string | undefined, private readonly host: StreamHost, private readonly retention: RetentionLimits, firstId = 1) {
    this.nextId = firstId;
    this.delivered = firstId - 1;
  }

  /** The id of the newest event queued (firstId - 1 before any). */
  get lastId(): number {
    return this.nextId - 1;
  }

  /** Bytes of delivered events kept for `Last-Event-ID` resume. */
  get retained(): number {
    return this.retainedBytes;
  }

  /**
   * Set by {@link release}, cleared by the next output: the stream's session is done with (closed or
   * deleted), and its connection drops the stream once no receiver holds it and nothing waits in it.
   */
  released = false;

  /**
   * Drops what was delivered and kept only for resume (its client closed the session). What is
   * delivered from now on is kept again, within the limits.
   */
  release(): void {
    this.released = true;
    this.trim({ events: 0, bytes: 0 });
  }

  /**
   * Lets go of the oldest delivered events, about `bytes` of them (never one the receiver still
   * needs), for the connection's or the daemon's retention budget (retention-budget.ts). Returns the
   * bytes let go.
   */
  shed(bytes: number): number {
    const before = this.retainedBytes;
    this.trim({ events: this.retention.events, bytes: Math.max(0, before - bytes) });
    return before - this.retainedBytes;
  }

  get receiver(): StreamReceiver | undefined {
    return this.receiverRef;
  }

  /** Bytes queued that no receiver has taken yet. */
  get pendingBytes(): number {
    let bytes = 0;
    for (let i = this.head; i < this.entries.length; i++) if (this.entries[i]!.id > this.delivered) bytes += this.entries[i]!.json.length;
    return bytes;
  }

  private get firstId(): number {
    return this.head < this.entries.length ? this.entries[this.head]!.id : this.nextId;
  }

  /** Queues one message (its JSON text) and delivers it if a receiver can take it. */
  push(json: string): void {
    if (this.aborted) return;
    this.released = false;
    this.entries.push({ id: this.nextId++, json });
    // The host may abort this stream here (its connection over the daemon's budget): then nothing to pump.
    this.host.pendingChanged(json.length);
    this.schedulePump();
  }

  /** Queues several messages at once (`bytes`: the sum of their lengths). */
  pushMany(jsons: readonly string[], bytes: number): void {
    if (this.aborted) return;
    this.released = false;
    for (const json of jsons) this.entries.push({ id: this.nextId++, json });
    this.host.pendingChanged(bytes);
    this.schedulePump();
  }

  /**
   * Writes on the next turn of the event loop, so that a burst of sends (an agent awaiting sends
   * that resolve at once) leaves corked in one syscall instead of one per message.
   */
  private schedulePump(): void {
    if (this.pumpScheduled || !this.receiverRef) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /**
   * Attaches a receiver. Without `lastEventId` it gets what no receiver has taken yet (the SDK
   * behaviour). With one inside the retained window (up to the newest event ever sent) it gets every
   * event after it; otherwise it first gets a `_troupe/replay_gap` notice, then everything stored.
   */
  attach(receiver: StreamReceiver, lastEventId: string | undefined): void {
    this.receiverRef = receiver;
    this.setBlocked(false);
    this.lastWriteAt = this.host.now();
    if (lastEventId === undefined) {
      this.cursor = this.delivered;
    } else {
      const asked = /^\d{1,15}$/.test(lastEventId.trim()) ? Number(lastEventId.trim()) : undefined;
      const first = this.firstId;
      // Valid: from just before the oldest stored event up to the newest one a client was sent.
      if (asked !== undefined && asked >= first - 1 && asked <= this.delivered) {
        this.cursor = asked;
      } else {
        const params: Record<string, unknown> = {};
        if (this.sessionId !== undefined) params['sessionId'] = this.sessionId;
        params['lastEventId'] = asked ?? lastEventId;
        params['firstAvailableId'] = first;
        this.setBlocked(!receiver.writeUnnumbered(JSON.stringify({ jsonrpc: '2.0', method: REPLAY_GAP_METHOD, params })));
        this.cursor = first - 1;
      }
    }
    this.pump();
  }

  /** Detaches `receiver` if it is the current one (its client went away). */
  detach(receiver: StreamReceiver): boolean {
    if (this.receiverRef !== receiver) return false;
    this.receiverRef = undefined;
    this.setBlocked(false);
    this.trim();
    return true;
  }

  private setBlocked(blocked: boolean): void {
    if (blocked && !this.blocked) this.blockedAt = this.host.now();
    this.blocked = blocked;
  }

  /**
   * How long a receiver has been waiting for its socket to take output it was given (0 when none
   * waits): one that takes nothing for `maxOutputStallMs` is stalled, whatever the buffered total.
   */
  blockedFor(now: number): number {
    return this.receiverRef && this.blocked ? now - this.blockedAt : 0;
  }

  /** The receiver's socket drained: continue. */
  resume(): void {
    this.setBlocked(false);
    this.pump();
  }

  /** Sends a keep-alive if the receiver has been silent for `idleMs`. */
  keepAlive(now: number, idleMs: number): void {
    const r = this.receiverRef;
    if (!r || this.blocked || now - this.lastWriteAt < idleMs) return;
    this.setBlocked(!r.keepAlive());
    this.lastWriteAt = now;
  }

  /** Ends the receiver and drops everything; the connection is shutting down. */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const r = this.receiverRef;
    this.receiverRef = undefined;
    this.host.pendingChanged(-this.pendingBytes);
    this.entries = [];
    this.head = 0;
    this.retainedBytes = 0;
    this.reportRetained();
    r?.end(!this.blocked);
  }

  private pump(): void {
    const r = this.receiverRef;
    if (!r || this.blocked || this.cursor >= this.nextId - 1) return;
    let taken = 0;
    r.cork(() => {
      while (!this.blocked && this.cursor < this.nextId - 1 && this.receiverRef === r) {
        if (r.frame && r.writeFrames) {
          // Several events in one write: what a burst from a child costs is then one socket write.
          let text = '';
          do {
            const entry = this.entries[this.head + (this.cursor + 1 - this.firstId)]!;
            this.cursor = entry.id;
            text += r.frame(entry.id, entry.json);
            taken += this.markDelivered(entry);
          } while (this.cursor < this.nextId - 1 && text.length < BATCH_CHARS);
          this.setBlocked(!r.writeFrames(text));
          continue;
        }
        const entry = this.entries[this.head + (this.cursor + 1 - this.firstId)]!;
        this.cursor = entry.id;
        this.setBlocked(!r.write(entry.id, entry.json));
        taken += this.markDelivered(entry);
      }
    });
    this.lastWriteAt = this.host.now();
    this.trim();
    if (taken > 0) {
      this.host.pendingChanged(-taken);
      this.host.progress(taken);
    }
  }

  /** Counts an entry written to a receiver; returns the pending bytes it took (0 if resent). */
  private markDelivered(entry: Entry): number {
    if (entry.id <= this.delivered) return 0;
    this.delivered = entry.id;
    this.retainedBytes += entry.json.length;
    return entry.json.length;
  }

  /** Drops delivered entries beyond the retention limits, never one the receiver still needs. */
  private trim(retention: RetentionLimits = this.retention): void {
    const limit = this.receiverRef ? Math.min(this.cursor, this.delivered) : this.delivered;
    while (this.head < this.entries.length) {
      const entry = this.entries[this.head]!;
      const retainedCount = this.delivered - entry.id + 1;
      if (entry.id > limit || (retainedCount <= retention.events && this.retainedBytes <= retention.bytes)) break;
      this.retainedBytes -= entry.json.length;
      this.entries[this.head] = undefined as unknown as Entry;
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 >= this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
    this.reportRetained();
  }

  /**
   * Tells the host what changed since it was last told. Last in trim(): the host may call shed() on
   * this very stream from here, which must find the entries settled.
   */
  private reportRetained(): void {
    const delta = this.retainedBytes - this.reportedRetained;
    if (delta === 0) return;
    this.reportedRetained = this.retainedBytes;
    this.host.retainedChanged(delta);
  }
}
