/**
 * Frames of the child → daemon control channel (fd 3 of every supervised `troupe acp`):
 * `u32 length (LE) | msgpack payload`. A pipe delivers bytes in order and does not tear records
 * the way a crashed file can, so there is no CRC: a malformed frame means a bug, and ends the channel.
 */
import { Packr, Unpackr } from 'msgpackr';
import type { ControlMessage } from './control-messages.js';

// An `events` frame carries a burst of same-shaped events: as msgpackr records (each shape defined
// once per frame, as in the event log) they pack several times faster than as maps. Other messages
// are single small objects, for which a plain map is cheaper than a record definition.
const recordPackr = new Packr({ useRecords: true, bundleStrings: true, moreTypes: false });
const plainPackr = new Packr({ useRecords: false, moreTypes: false });
// Reads both: records carry their own definitions, so no state is shared between frames.
const unpackr = new Unpackr({ useRecords: true, bundleStrings: true, mapsAsObjects: true, moreTypes: false });
const MAX_FRAME_BYTES = 16 * 1024 * 1024;

export function encodeControlFrame(message: ControlMessage): Buffer {
  const payload = (message.t === 'events' && message.events.length > 1 ? recordPackr : plainPackr).pack(message);
  const out = Buffer.allocUnsafe(4 + payload.length);
  out.writeUInt32LE(payload.length, 0);
  payload.copy(out, 4);
  return out;
}

/** Reassembles frames from chunks as they arrive. */
export class ControlFrameDecoder {
  private pending: Buffer = Buffer.alloc(0);

  /** Every complete message in `chunk` (and what was left over before it). Throws on a malformed frame. */
  push(chunk: Buffer): ControlMessage[] {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const out: ControlMessage[] = [];
    let offset = 0;
    while (this.pending.length - offset >= 4) {
      const length = this.pending.readUInt32LE(offset);
      if (length === 0 || length > MAX_FRAME_BYTES) throw new Error(`control frame of ${length} bytes at offset ${offset}`);
      if (this.pending.length - offset - 4 < length) break;
      out.push(unpackr.unpack(this.pending.subarray(offset + 4, offset + 4 + length)) as ControlMessage);
      offset += 4 + length;
    }
    this.pending = this.pending.subarray(offset);
    return out;
  }
}
