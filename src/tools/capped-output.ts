/**
 * A byte buffer that keeps the head and the tail of a stream within a fixed budget, so that a
 * command printing gigabytes costs bounded memory and the model still sees how it started and how
 * it ended (where the error usually is).
 */
import { StringDecoder } from 'node:string_decoder';

/** Part of the budget kept from the start; the rest goes to the tail. */
const HEAD_SHARE = 0.25;

export class CappedOutput {
  private readonly headMax: number;
  private readonly tailMax: number;
  private readonly head: Buffer[] = [];
  private headLen = 0;
  private tail: Buffer[] = [];
  private tailLen = 0;
  /** Every byte ever pushed. */
  total = 0;

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`output limit must be a positive integer, got ${limit}`);
    this.headMax = Math.floor(limit * HEAD_SHARE);
    this.tailMax = limit - this.headMax;
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.headLen < this.headMax) {
      const take = Math.min(this.headMax - this.headLen, rest.length);
      this.head.push(rest.subarray(0, take));
      this.headLen += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0) return;
    this.tail.push(rest);
    this.tailLen += rest.length;
    // Drop whole chunks from the front first, then trim the first remaining one.
    while (this.tail.length > 0 && this.tailLen - this.tail[0]!.length >= this.tailMax) this.tailLen -= this.tail.shift()!.length;
    if (this.tail.length > 0 && this.tailLen > this.tailMax) {
      const cut = this.tailLen - this.tailMax;
      this.tail[0] = this.tail[0]!.subarray(cut);
      this.tailLen -= cut;
    }
  }

  get truncated(): boolean {
    return this.total > this.headLen + this.tailLen;
  }

  /** Bytes kept (head then tail), without any marker. */
  keptBytes(): { head: Buffer; tail: Buffer } {
    return { head: Buffer.concat(this.head), tail: Buffer.concat(this.tail) };
  }

  /** The kept text; when bytes were dropped, a marker line says how many. */
  text(): string {
    const { head, tail } = this.keptBytes();
    if (!this.truncated) return Buffer.concat([head, tail]).toString('utf8');
    const omitted = this.total - head.length - tail.length;
    // Start the tail on a character boundary rather than in the middle of a UTF-8 sequence.
    let start = 0;
    while (start < tail.length && (tail[start]! & 0xc0) === 0x80) start++;
    // And end the head before a character its cut split: StringDecoder keeps back an incomplete last sequence.
    return `${new StringDecoder('utf8').write(head)}\n[... ${omitted} bytes of output omitted ...]\n${tail.subarray(start).toString('utf8')}`;
  }
}
