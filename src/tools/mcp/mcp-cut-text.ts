/**
 * Text given in pieces, of which only a start is kept and the rest counted (spec/tools.md §7): what a
 * model reads of an MCP result, made without making the result's whole text.
 */
import { jsonFittingPrefix, pairSafeEnd } from '../../core/text-cut.js';

/**
 * What a limit counts: characters (UTF-16 units), or bytes of the text as a JSON string in UTF-8,
 * quotes aside: what the session's log holds of it, each call's output twice (what the model reads
 * and what the client is shown) in one event of at most 1 MiB.
 */
export type CutUnit = 'characters' | 'bytes';

/** How many pieces are joined into one string as they are kept (a result may be 300000 pieces of one character). */
const BATCH = 1024;

export class CutText {
  private readonly kept: string[] = [];
  private batch: string[] = [];
  /** Characters kept, and what they count in the limit's unit. */
  private keptLength = 0;
  private keptSize = 0;
  /** Characters given in all. */
  private length = 0;
  /** Whether a piece was cut: nothing after it is kept. */
  private full = false;

  constructor(
    private readonly limit: number,
    private readonly unit: CutUnit = 'characters',
  ) {}

  add(piece: string): void {
    this.length += piece.length;
    if (this.full || piece.length === 0) return;
    const room = this.limit - this.keptSize;
    // In bytes, the cut gives what it keeps counts: the piece is measured once.
    let n: number;
    let size: number;
    if (this.unit === 'bytes') ({ chars: n, bytes: size } = jsonFittingPrefix(piece, room));
    else n = size = pairSafeEnd(piece, Math.min(piece.length, room));
    if (n < piece.length) this.full = true;
    if (n === 0) return;
    this.batch.push(n < piece.length ? piece.slice(0, n) : piece);
    this.keptLength += n;
    this.keptSize += size;
    if (this.batch.length >= BATCH) this.flush();
  }

  /**
   * The text, or what was kept of it and a note of how many characters were not. Cut, it is a string
   * of its own, made by join: a slice of a piece (and a concatenation with one) keeps the whole piece
   * in memory for as long as the slice lives, which for a result's output is as long as the session's
   * history (until 2026-12-07, a result's whole 10 MB text).
   */
  text(): string {
    this.flush();
    if (this.keptLength === this.length) return this.kept.join('');
    return [...this.kept, `\n[… ${this.length - this.keptLength} more characters cut]`].join('');
  }

  private flush(): void {
    if (this.batch.length > 0) this.kept.push(this.batch.join(''));
    this.batch = [];
  }
}
