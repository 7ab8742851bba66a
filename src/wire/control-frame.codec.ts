/**
 * Frames of the child → daemon control channel (fd 3 of every supervised `troupe acp`):
 * `u32 length (LE) | msgpack payload`. A pipe delivers bytes in order and does not tear records
 * the way a crashed file can, so there is no CRC: a malformed frame means a bug, and ends the channel.
 */
import { Packr, Unpackr } from 'msgpackr';
import type { AgentEvent } from '../core/events.js';
import { INDEXED_EVENT_TYPES } from '../core/indexed-events.js';
import type { ControlMessage, ControlWireMessage } from './control-messages.js';

// An `events` frame carries a burst of same-shaped events: as msgpackr records (each shape defined
// once per frame, as in the event log) they pack several times faster than as maps. Other messages
// are single small objects, for which a plain map is cheaper than a record definition.
const recordPackr = new Packr({ useRecords: true, bundleStrings: true, moreTypes: false });
const plainPackr = new Packr({ useRecords: false, moreTypes: false });
// Reads both, and the event log's records (same options as its reader): records carry their own
// definitions, so no state is shared between frames.
const unpackr = new Unpackr({ useRecords: true, bundleStrings: true, mapsAsObjects: true, moreTypes: false });
const MAX_FRAME_BYTES = 16 * 1024 * 1024;

export function encodeControlFrame(message: ControlWireMessage): Buffer {
  const payload = (message.t === 'events' && message.events.length > 1 ? recordPackr : plainPackr).pack(message);
  const out = Buffer.allocUnsafe(4 + payload.length);
  out.writeUInt32LE(payload.length, 0);
  payload.copy(out, 4);
  return out;
}

/** Reassembles frames from chunks as they arrive. */
export class ControlFrameDecoder {
  private pending: Buffer = Buffer.alloc(0);
  /** Chunks of a frame still incomplete, and their total size: joined once, when it is whole. */
  private parts: Buffer[] = [];
  private partsBytes = 0;
  private needed = 0;

  /** Every complete message in `chunk` (and what was left over before it). Throws on a malformed frame. */
  push(chunk: Buffer): ControlMessage[] {
    if (this.needed > 0) {
      // A big frame (a burst of events) spans many pipe reads: do not re-copy it on every read.
      this.parts.push(chunk);
      this.partsBytes += chunk.length;
      if (this.partsBytes < this.needed) return [];
      chunk = Buffer.concat(this.parts, this.partsBytes);
      this.parts = [];
      this.partsBytes = 0;
      this.needed = 0;
      this.pending = chunk;
    } else {
      this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    }
    const out: ControlMessage[] = [];
    let offset = 0;
    while (this.pending.length - offset >= 4) {
      const length = this.pending.readUInt32LE(offset);
      if (length === 0 || length > MAX_FRAME_BYTES) throw new Error(`control frame of ${length} bytes at offset ${offset}`);
      if (this.pending.length - offset - 4 < length) break;
      out.push(fromWire(unpackr.unpack(this.pending.subarray(offset + 4, offset + 4 + length)) as ControlWireMessage));
      offset += 4 + length;
    }
    this.pending = this.pending.subarray(offset);
    if (this.pending.length >= 4) {
      const rest = this.pending;
      this.needed = 4 + rest.readUInt32LE(0);
      this.parts = [rest];
      this.partsBytes = rest.length;
      this.pending = Buffer.alloc(0);
    }
    return out;
  }
}

function fromWire(m: ControlWireMessage): ControlMessage {
  if (m.t === 'events') return { ...m, count: m.events.length, lastSeq: m.events.at(-1)?.seq, indexed: m.events.filter(isIndexed) };
  if (m.t !== 'records') return m;
  // The records are decoded when `events` is first read, if ever: a daemon reads a burst's events
  // only for an open feed (about 0.3 µs an update otherwise, 8–10% of the daemon's CPU while streaming).
  const { records } = m;
  let events: AgentEvent[] | undefined;
  return {
    t: 'events',
    sessionId: m.sessionId,
    count: m.n,
    ...(m.last === undefined ? {} : { lastSeq: m.last }),
    indexed: m.ix ?? [],
    get events(): AgentEvent[] {
      return (events ??= eventsOfRecords(records));
    },
  };
}

const isIndexed = (e: AgentEvent): boolean => INDEXED_EVENT_TYPES.has(e.type);

/**
 * The events in a run of event-log records: `u32 length | u32 crc32 | payload` each, the payload
 * `[firstSeq, count, events]` (spec/event-log.md §1). The CRC guards against torn files; a pipe
 * does not tear, so it is not recomputed here.
 */
function eventsOfRecords(bytes: Uint8Array): AgentEvent[] {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const events: AgentEvent[] = [];
  for (let offset = 0; offset < buf.length; ) {
    if (buf.length - offset < 8) throw new Error(`torn event record at offset ${offset} of a records message`);
    const length = buf.readUInt32LE(offset);
    if (length === 0 || offset + 8 + length > buf.length) throw new Error(`event record of ${length} bytes at offset ${offset} of a records message`);
    const record = unpackr.unpack(buf.subarray(offset + 8, offset + 8 + length)) as [number, number, AgentEvent[]];
    if (!Array.isArray(record) || !Array.isArray(record[2])) throw new Error(`not an event record at offset ${offset} of a records message`);
    for (const e of record[2]) events.push(e);
    offset += 8 + length;
  }
  return events;
}
