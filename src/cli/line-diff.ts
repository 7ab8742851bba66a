/**
 * A small line diff for showing edits: longest common subsequence over lines, printed as unified
 * `-`/`+`/` ` lines with a little context. Big inputs fall back to "all old out, all new in".
 */
import type { Style } from './style.js';
import { printable } from './terminal-text.js';

export type DiffLine = { op: ' ' | '-' | '+'; text: string };

/** Lines of a diff shown at most (the rest is counted). */
const MAX_SHOWN = 40;

/** A file's diff as terminal lines: its path, then the changed lines (coloured), at most 40. */
export function diffLines(path: string, oldText: string | null | undefined, newText: string, style: Style): string[] {
  const lines = lineDiff(oldText, newText);
  const out = [style.dim(`  ${printable(path)}`)];
  for (const l of lines.slice(0, MAX_SHOWN)) {
    const line = `  ${l.op} ${printable(l.text)}`;
    out.push(l.op === '+' ? style.green(line) : l.op === '-' ? style.red(line) : style.dim(line));
  }
  if (lines.length > MAX_SHOWN) out.push(style.dim(`  … ${lines.length - MAX_SHOWN} more lines`));
  return out;
}

const MAX_CELLS = 250_000;

/** The lines of old → new, with `context` unchanged lines kept around each change. */
export function lineDiff(oldText: string | null | undefined, newText: string, context = 2): DiffLine[] {
  const a = oldText ? oldText.replace(/\n$/, '').split('\n') : [];
  const b = newText.replace(/\n$/, '').split('\n');
  let ops: DiffLine[];
  if (a.length * b.length > MAX_CELLS) {
    ops = [...a.map((text) => ({ op: '-' as const, text })), ...b.map((text) => ({ op: '+' as const, text }))];
  } else {
    // lcs[i][j] = length of the LCS of a[i..] and b[j..].
    const lcs = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
    for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    ops = [];
    let i = 0;
    let j = 0;
    while (i < a.length || j < b.length) {
      if (i < a.length && j < b.length && a[i] === b[j]) ops.push({ op: ' ', text: a[i++]! }), j++;
      // On a tie, removals go first, as in a unified diff.
      else if (j < b.length && (i === a.length || lcs[i]![j + 1]! > lcs[i + 1]![j]!)) ops.push({ op: '+', text: b[j++]! });
      else ops.push({ op: '-', text: a[i++]! });
    }
  }
  const keep = ops.map((o, k) => o.op !== ' ' || ops.slice(Math.max(0, k - context), k + context + 1).some((n) => n.op !== ' '));
  return ops.filter((_, k) => keep[k]);
}
