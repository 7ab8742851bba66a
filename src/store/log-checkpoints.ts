/**
 * A sparse map from seq to file offset: one entry per ~64 KiB of log, so that a read from any
 * cursor starts near its record without keeping an entry per record in memory.
 */
const SPACING = 64 * 1024;

export class LogCheckpoints {
  private readonly seqs: number[] = [];
  private readonly offsets: number[] = [];
  private lastOffset = -Infinity;

  /** Notes that the record starting at `offset` begins with `firstSeq`. Records must come in file order. */
  add(firstSeq: number, offset: number): void {
    if (offset - this.lastOffset < SPACING) return;
    this.seqs.push(firstSeq);
    this.offsets.push(offset);
    this.lastOffset = offset;
  }

  /** Offset of a record at or before the one that holds `seq` (0 if none is known). */
  offsetFor(seq: number): number {
    let lo = 0;
    let hi = this.seqs.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.seqs[mid]! <= seq) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found < 0 ? 0 : this.offsets[found]!;
  }

  get size(): number {
    return this.seqs.length;
  }
}
