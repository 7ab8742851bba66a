/**
 * Record framing of a log file: `u32 length | u32 crc32 | payload`, both little-endian, the CRC
 * (zlib's CRC-32) covering the payload. A zero length is invalid, so a zero-filled tail (what a
 * file system may leave after a crash) never passes for a record.
 */
import { readSync } from 'node:fs';
import { crc32 } from 'node:zlib';

export const FRAME_HEADER_BYTES = 8;
/** Records larger than this are refused as damage: no valid writer produces them. */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;

/** Frames one payload. */
export function frameRecord(payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.length);
  out.writeUInt32LE(payload.length, 0);
  out.writeUInt32LE(crc32(payload), 4);
  out.set(payload, FRAME_HEADER_BYTES);
  return out;
}

/** Why the frames stop being valid at some offset. */
export interface FrameProblem {
  offset: number;
  reason: 'torn_header' | 'zero_filled' | 'bad_length' | 'torn_record' | 'crc_mismatch' | 'bad_record';
  detail: string;
}

export interface FrameWalk {
  /** End of the last valid frame visited. */
  validEnd: number;
  problem?: FrameProblem;
}

/** Called with each valid payload (a view valid only during the call); returns `false` to stop, or a problem to reject the frame. */
export type FrameVisitor = (payload: Buffer, offset: number) => boolean | void | FrameProblem;

const CHUNK = 1024 * 1024;

function allZero(fd: number, from: number, end: number): boolean {
  const buf = Buffer.allocUnsafe(Math.min(CHUNK, end - from));
  for (let pos = from; pos < end; ) {
    const n = readSync(fd, buf, 0, Math.min(buf.length, end - pos), pos);
    if (n <= 0) break;
    for (let i = 0; i < n; i++) if (buf[i] !== 0) return false;
    pos += n;
  }
  return true;
}

type Header = { len: number } | FrameProblem;

/** Checks the frame header at file offset `offset`; `avail` bytes of file remain from there. */
function checkHeader(buf: Buffer, at: number, bufAvail: number, offset: number, avail: number, zeroTail: () => boolean): Header {
  if (bufAvail < FRAME_HEADER_BYTES) {
    return zeroTail()
      ? { offset, reason: 'zero_filled', detail: `zero-filled tail of ${avail} bytes` }
      : { offset, reason: 'torn_header', detail: `truncated record header (${avail} of ${FRAME_HEADER_BYTES} bytes)` };
  }
  const len = buf.readUInt32LE(at);
  if (len === 0) {
    return zeroTail() ? { offset, reason: 'zero_filled', detail: `zero-filled tail of ${avail} bytes` } : { offset, reason: 'bad_length', detail: 'record length 0' };
  }
  if (len > MAX_RECORD_BYTES) return { offset, reason: 'bad_length', detail: `record length ${len} exceeds ${MAX_RECORD_BYTES}` };
  if (FRAME_HEADER_BYTES + len > avail) {
    return { offset, reason: 'torn_record', detail: `truncated record: ${len} payload bytes announced, ${avail - FRAME_HEADER_BYTES} present` };
  }
  return { len };
}

const CRC_PROBLEM = (offset: number): FrameProblem => ({ offset, reason: 'crc_mismatch', detail: 'record checksum mismatch' });

/** Walks the frames of `fd` in `[start, end)`, checking length and CRC of each. Reads in large chunks. */
export function walkFrames(fd: number, start: number, end: number, visit: FrameVisitor): FrameWalk {
  let buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(end - start, FRAME_HEADER_BYTES)));
  let bufStart = start;
  let bufLen = 0;
  const load = (pos: number, n: number): void => {
    if (pos >= bufStart && pos + n <= bufStart + bufLen) return;
    if (n > buf.length) buf = Buffer.allocUnsafe(Math.max(n, CHUNK));
    const want = Math.min(buf.length, end - pos);
    let got = 0;
    while (got < want) {
      const r = readSync(fd, buf, got, want - got, pos + got);
      if (r <= 0) break;
      got += r;
    }
    bufStart = pos;
    bufLen = got;
  };
  let pos = start;
  while (pos < end) {
    load(pos, Math.min(FRAME_HEADER_BYTES, end - pos));
    const at = pos - bufStart;
    const h = checkHeader(buf, at, Math.min(bufLen - at, end - pos), pos, end - pos, () => allZero(fd, pos, end));
    if ('reason' in h) return { validEnd: pos, problem: h };
    load(pos, FRAME_HEADER_BYTES + h.len);
    const p0 = pos - bufStart + FRAME_HEADER_BYTES;
    const payload = buf.subarray(p0, p0 + h.len);
    if (crc32(payload) !== buf.readUInt32LE(p0 - 4)) return { validEnd: pos, problem: CRC_PROBLEM(pos) };
    const verdict = visit(payload, pos);
    if (verdict && typeof verdict === 'object') return { validEnd: pos, problem: verdict };
    pos += FRAME_HEADER_BYTES + h.len;
    if (verdict === false) break;
  }
  return { validEnd: pos };
}

/** `walkFrames` over bytes already in memory (the fast path of reading a whole file). */
export function walkBuffer(buf: Buffer, visit: FrameVisitor): FrameWalk {
  const end = buf.length;
  let pos = 0;
  while (pos < end) {
    const h = checkHeader(buf, pos, end - pos, pos, end - pos, () => buf.subarray(pos).every((b) => b === 0));
    if ('reason' in h) return { validEnd: pos, problem: h };
    const payload = buf.subarray(pos + FRAME_HEADER_BYTES, pos + FRAME_HEADER_BYTES + h.len);
    if (crc32(payload) !== buf.readUInt32LE(pos + 4)) return { validEnd: pos, problem: CRC_PROBLEM(pos) };
    const verdict = visit(payload, pos);
    if (verdict && typeof verdict === 'object') return { validEnd: pos, problem: verdict };
    pos += FRAME_HEADER_BYTES + h.len;
    if (verdict === false) break;
  }
  return { validEnd: pos };
}
