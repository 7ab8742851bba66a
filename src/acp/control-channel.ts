/**
 * The supervised child's side of the control channel (fd 3): a hello, heartbeats, each session's
 * events once durable, what an opened session's log held that its daemon's index missed, and
 * machine transitions. Only `troupe acp --supervised` opens it; its daemon
 * reads it (spec/daemon.md §Control channel).
 */
import { Socket } from 'node:net';
import type { InspectionEvent } from 'xstate';
import type { AgentEvent } from '../core/events.js';
import { INDEXED_EVENT_TYPES } from '../core/indexed-events.js';
import type { EventLog } from '../core/ports.js';
import { VERSION } from '../core/version.js';
import { transitionRecorder } from '../machines/transition-recorder.js';
import { encodeControlFrame } from '../wire/control-frame.codec.js';
import type { ControlWireMessage } from '../wire/control-messages.js';

export interface SessionReporter {
  /** Called for every event as it is appended; forwards it once durable. */
  event(log: EventLog, event: AgentEvent): void;
  /**
   * Indexed events an opened session's log held that its daemon's index had not folded (INDEXED_SEQ);
   * with `rewound`, the log's last seq once opened, below INDEXED_SEQ: all of the log's indexed events.
   */
  indexed(sessionId: string, events: AgentEvent[], rewound?: number): void;
  transition(sessionId: string, ev: InspectionEvent): void;
}

/** Indexed events per `indexed` message. */
const INDEXED_SLICE = 1000;

/** A burst bigger than this goes in several frames (the daemon refuses frames over 16 MiB). */
const MAX_RECORDS_FRAME_BYTES = 4 * 1024 * 1024;

/** Runs of written records: their bytes, and the seqs they hold (a run's seqs are consecutive). */
interface RecordRun {
  firstSeq: number;
  lastSeq: number;
  bytes: Buffer;
}

/**
 * The `records` messages of written runs: runs joined up to `max` bytes a message, a run larger than
 * that in parts of whole records. Each message says how many events it holds, its last seq and its
 * indexed events (taken from the front of `indexed`, in seq order), so that the daemon does not
 * decode the records to learn them; a part of a split run but its last says none (`n: 0`).
 */
function recordMessages(sessionId: string, runs: RecordRun[], indexed: AgentEvent[], max: number): ControlWireMessage[] {
  const out: ControlWireMessage[] = [];
  const summary = (firstSeq: number, lastSeq: number) => {
    let k = 0;
    while (k < indexed.length && indexed[k]!.seq <= lastSeq) k++;
    const ix = indexed.splice(0, k);
    return { n: lastSeq - firstSeq + 1, last: lastSeq, ...(ix.length ? { ix } : {}) };
  };
  for (let i = 0; i < runs.length; ) {
    const first = runs[i]!;
    if (first.bytes.length > max) {
      const parts = recordParts(first.bytes, max);
      parts.forEach((records, p) => out.push({ t: 'records', sessionId, records, ...(p === parts.length - 1 ? summary(first.firstSeq, first.lastSeq) : { n: 0 }) }));
      i++;
      continue;
    }
    let j = i + 1;
    let bytes = first.bytes.length;
    while (j < runs.length && bytes + runs[j]!.bytes.length <= max) bytes += runs[j++]!.bytes.length;
    const group = runs.slice(i, j);
    const records = group.length === 1 ? first.bytes : Buffer.concat(group.map((r) => r.bytes), bytes);
    out.push({ t: 'records', sessionId, records, ...summary(first.firstSeq, group.at(-1)!.lastSeq) });
    i = j;
  }
  return out;
}

/** Whole records (`u32 length | u32 crc | payload` each), in slices of at most `max` bytes (or one record, if larger). */
function recordParts(bytes: Buffer, max: number): Buffer[] {
  if (bytes.length <= max) return [bytes];
  const parts: Buffer[] = [];
  let start = 0;
  let offset = 0;
  while (offset < bytes.length) {
    const next = offset + 8 + bytes.readUInt32LE(offset);
    if (next - start > max && offset > start) {
      parts.push(bytes.subarray(start, offset));
      start = offset;
    }
    offset = next;
  }
  parts.push(bytes.subarray(start));
  return parts;
}

/** A log that can hand over the records it writes (FileEventLog). */
interface RecordSource {
  forwardRecords(listener: (records: Buffer, firstSeq: number, lastSeq: number) => void): number | undefined;
}

/** What the channel holds for one session until it is durable. */
interface SessionOutbox {
  /** Events after this seq arrive as the log's written records; those up to it, one by one. */
  forwardedAfter: number;
  /** Events reported before the log forwarded its records (a reopened session's catch-up). */
  loose: AgentEvent[];
  /** Written records, in seq order, with the seqs each run holds. */
  records: RecordRun[];
  /** The indexed events (INDEXED_EVENT_TYPES) after `forwardedAfter` not yet sent, in seq order: named beside their records. */
  indexed: AgentEvent[];
  /** Highest seq reported and not yet sent. */
  newest: number;
  waiting: boolean;
}

export class ControlChannel implements SessionReporter {
  private events = 0;
  private readonly timer: NodeJS.Timeout;
  /** Per log (a session reopened in this process gets a new log, and a new outbox). */
  private readonly outboxes = new WeakMap<EventLog, SessionOutbox>();
  /** Per session: its machines' last reported states (transitionRecorder drops repeats). */
  private readonly recorders = new Map<string, (ev: InspectionEvent) => void>();

  constructor(
    private readonly socket: Socket,
    heartbeatMs: number,
  ) {
    this.send({ t: 'hello', pid: process.pid, version: VERSION });
    this.timer = setInterval(() => this.heartbeat(), heartbeatMs);
    this.timer.unref();
    this.heartbeat();
  }

  /** fd 3 as a socket; undefined when the process was not given one. */
  static open(heartbeatMs: number): ControlChannel | undefined {
    try {
      const socket = new Socket({ fd: 3, readable: false, writable: true });
      socket.on('error', () => undefined); // the daemon went away: nothing left to tell
      return new ControlChannel(socket, heartbeatMs);
    } catch {
      return undefined;
    }
  }

  send(message: ControlWireMessage): void {
    if (!this.socket.destroyed) this.socket.write(encodeControlFrame(message));
  }

  /**
   * Reports an event appended to `log`. A streamed reply is thousands of events: rather than
   * encoding each one again for the daemon, the channel forwards the records the log has written
   * (the same bytes as in the file) once they are durable.
   */
  event(log: EventLog, event: AgentEvent): void {
    this.events++;
    const box = this.outbox(log);
    if (event.seq <= box.forwardedAfter) box.loose.push(event);
    else if (INDEXED_EVENT_TYPES.has(event.type)) box.indexed.push(event);
    if (event.seq > box.newest) box.newest = event.seq;
    // One wait per burst, not per event: after this loop turn, wait until the newest reported event
    // is durable and send everything durable by then.
    if (box.waiting) return;
    box.waiting = true;
    setImmediate(() => this.sendWhenDurable(log, box));
  }

  private outbox(log: EventLog): SessionOutbox {
    let box = this.outboxes.get(log);
    if (box) return box;
    const created: SessionOutbox = { forwardedAfter: Infinity, loose: [], records: [], indexed: [], newest: 0, waiting: false };
    const source = log as Partial<RecordSource>;
    const written =
      typeof source.forwardRecords === 'function'
        ? source.forwardRecords.call(log, (bytes, firstSeq, lastSeq) => void created.records.push({ firstSeq, lastSeq, bytes }))
        : undefined;
    if (written !== undefined) created.forwardedAfter = written;
    this.outboxes.set(log, (box = created));
    return box;
  }

  private sendWhenDurable(log: EventLog, box: SessionOutbox): void {
    const target = box.newest;
    void log.whenDurable(target).then(
      () => {
        this.flush(log.sessionId, box, target);
        if (box.newest > target) setImmediate(() => this.sendWhenDurable(log, box));
        else box.waiting = false;
      },
      () => void (box.waiting = false),
    );
  }

  indexed(sessionId: string, events: AgentEvent[], rewound?: number): void {
    // Read from a durable log: sent at once, ahead of anything the open appended (reported once
    // durable), so that the daemon folds them in seq order. In slices, each well under a frame's
    // limit (these events are small; an index far behind its log can have thousands). A rewind is
    // the first slice's (sent even with no event: a log whose prefix is lost); the others fold after it.
    if (rewound !== undefined) this.send({ t: 'indexed', sessionId, events: events.slice(0, INDEXED_SLICE), rewound });
    for (let i = rewound === undefined ? 0 : INDEXED_SLICE; i < events.length; i += INDEXED_SLICE) this.send({ t: 'indexed', sessionId, events: events.slice(i, i + INDEXED_SLICE) });
  }

  transition(sessionId: string, ev: InspectionEvent): void {
    let record = this.recorders.get(sessionId);
    if (!record) this.recorders.set(sessionId, (record = transitionRecorder((t) => this.send({ t: 'transition', sessionId, ...t }))));
    record(ev);
  }

  close(): void {
    clearInterval(this.timer);
    this.socket.end();
  }

  /** Sends what is durable through `durableSeq`: loose events first (they come before any record). */
  private flush(sessionId: string, box: SessionOutbox, durableSeq: number): void {
    let n = 0;
    while (n < box.loose.length && box.loose[n]!.seq <= durableSeq) n++;
    if (n > 0) this.send({ t: 'events', sessionId, events: box.loose.splice(0, n) });
    let r = 0;
    while (r < box.records.length && box.records[r]!.lastSeq <= durableSeq) r++;
    if (r === 0) return;
    for (const message of recordMessages(sessionId, box.records.splice(0, r), box.indexed, MAX_RECORDS_FRAME_BYTES)) this.send(message);
  }

  private heartbeat(): void {
    const mem = process.memoryUsage();
    this.send({ t: 'hb', at: Date.now(), rss: mem.rss, heapUsed: mem.heapUsed, events: this.events });
  }
}
