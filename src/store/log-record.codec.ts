/**
 * Payloads of log records (msgpack). A file starts with one header record (a map); every other
 * record is `[firstSeq, count, events]` with `count` consecutive events. Packing many same-shaped
 * events in one call lets msgpackr define each shape once per record, which is what makes replay
 * decode fast without persisting shared structures. See spec/event-log.md §1.
 */
// Not the package root: on Node it also loads the native string extractor (msgpackr-extract), a
// dlopen and a file-system probe at every start, and records with bundled strings never use it.
import { Packr, Unpackr } from 'msgpackr/pack';
import type { AgentEvent } from '../core/events.js';
import { TroupeError } from '../core/errors.js';
import { frameRecord } from './record-frame.codec.js';

/** Version of the file format, stored in the header record. */
export const LOG_FORMAT_VERSION = 1;

export interface LogHeader {
  troupeLog: number;
  sessionId: string;
  createdAt: number;
  /** Seq of the last event before this file's first event (0 unless the file does not start at the beginning). */
  baseSeq: number;
  /** Present in the tombstone that replaces a deleted session's log: what the index showed of it. */
  tombstone?: { cwd: string; model: string; mode: string; title?: string; createdAt: number; deletedAt: number };
  /**
   * A spare log, made ahead by the process `pid` for a session it may create (spec/event-log.md §6):
   * until it holds an event, it is no session.
   */
  spare?: { pid: number };
}

const packr = new Packr({ useRecords: true, bundleStrings: true, moreTypes: false });
// A record shape costs its definition plus a slow first read; for a lone event, a plain map is cheaper.
const plainPackr = new Packr({ useRecords: false, moreTypes: false });
const SMALL_RECORD = 4;
const unpackr = new Unpackr({ useRecords: true, bundleStrings: true, mapsAsObjects: true, moreTypes: false });

/** Frames the header record. */
export function encodeHeaderRecord(header: LogHeader): Buffer {
  const { troupeLog, sessionId, createdAt, baseSeq, tombstone, spare } = header;
  return frameRecord(packr.pack({ troupeLog, sessionId, createdAt, baseSeq, ...(tombstone ? { tombstone } : {}), ...(spare ? { spare } : {}) }));
}

/** Frames consecutive events as one record. */
export function encodeEventRecord(events: readonly AgentEvent[]): Buffer {
  // pack() returns a view of a buffer it reuses: frameRecord copies it out at once.
  const p = events.length < SMALL_RECORD ? plainPackr : packr;
  return frameRecord(p.pack([events[0]!.seq, events.length, events]));
}

function readUint(buf: Buffer, off: number): [number, number] | undefined {
  if (off >= buf.length) return undefined;
  const b = buf[off]!;
  if (b <= 0x7f) return [b, off + 1];
  if (b === 0xcc && off + 2 <= buf.length) return [buf[off + 1]!, off + 2];
  if (b === 0xcd && off + 3 <= buf.length) return [buf.readUInt16BE(off + 1), off + 3];
  if (b === 0xce && off + 5 <= buf.length) return [buf.readUInt32BE(off + 1), off + 5];
  if (b === 0xcf && off + 9 <= buf.length) return [Number(buf.readBigUInt64BE(off + 1)), off + 9];
  if (b === 0xcb && off + 9 <= buf.length) {
    const v = buf.readDoubleBE(off + 1);
    return Number.isSafeInteger(v) && v >= 0 ? [v, off + 9] : undefined;
  }
  return undefined;
}

/** Reads `firstSeq` and `count` of an event record without decoding it, or `undefined` if it is not one. */
export function peekEventRecord(payload: Buffer): { firstSeq: number; count: number } | undefined {
  if (payload[0] !== 0x93) return undefined;
  const a = readUint(payload, 1);
  if (!a) return undefined;
  const b = readUint(payload, a[1]);
  if (!b || a[0] < 1 || b[0] < 1) return undefined;
  return { firstSeq: a[0], count: b[0] };
}

/** Decodes the header record, or `undefined` if the payload is not one. */
export function decodeHeaderRecord(payload: Buffer): LogHeader | undefined {
  if (payload[0] === 0x93) return undefined;
  let v: unknown;
  try {
    v = unpackr.unpack(payload);
  } catch {
    return undefined;
  }
  if (!v || typeof v !== 'object') return undefined;
  const h = v as Partial<LogHeader>;
  if (typeof h.troupeLog !== 'number' || typeof h.sessionId !== 'string' || typeof h.createdAt !== 'number') return undefined;
  const out: LogHeader = { troupeLog: h.troupeLog, sessionId: h.sessionId, createdAt: h.createdAt, baseSeq: typeof h.baseSeq === 'number' ? h.baseSeq : 0 };
  if (h.tombstone && typeof h.tombstone === 'object') out.tombstone = h.tombstone;
  if (h.spare && typeof h.spare === 'object' && Number.isInteger(h.spare.pid)) out.spare = { pid: h.spare.pid };
  return out;
}

/** Decodes the events of an event record. Throws `log_corrupt` if a checksummed record does not decode as one. */
export function decodeEventRecord(payload: Buffer, offset: number): AgentEvent[] {
  let v: unknown;
  try {
    v = unpackr.unpack(payload);
  } catch (err) {
    throw new TroupeError('log_corrupt', `record at byte ${offset} does not decode: ${(err as Error).message}`, { offset });
  }
  if (!Array.isArray(v) || v.length !== 3 || !Array.isArray(v[2]) || v[2].length !== v[1]) {
    throw new TroupeError('log_corrupt', `record at byte ${offset} is not an event record`, { offset });
  }
  return v[2] as AgentEvent[];
}
