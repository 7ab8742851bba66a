/**
 * A value's JSON text written and read in pieces, never as one string. V8's longest string is
 * 2^29 - 24 characters (some 512 MiB): `JSON.stringify` of a value whose JSON is longer throws a
 * RangeError, and so does joining the pieces of such a text to `JSON.parse` it. A value the process
 * holds can have JSON that long: a tool input of 90 million control characters is 90 MB as a string
 * and 540 MB as JSON (each one `\u0001`). The event log keeps such an input as its JSON text in
 * slices (spec/event-log.md §5.1); these make the text and read it back piece by piece.
 */
import { jsonStringLength } from './json-bytes.js';
import { walkJson } from './json-walk.js';
import { isHighSurrogate, isLowSurrogate } from './text-cut.js';

/** V8's longest string (64-bit): a text longer than this cannot be made, only kept in pieces. */
const MAX_STRING_LENGTH = 2 ** 29 - 24;

/** Characters of a long string escaped at a time: its JSON is written in pieces of at most 6 times this. */
const STRING_CHUNK = 8192;

/**
 * Gives `piece` the JSON text of `value`, in order, exactly as `JSON.stringify(value)` writes it
 * (nothing for a value it writes nothing for: `undefined`, a function), in pieces of at most about
 * 6 × `chunk` characters. Throws what `JSON.stringify` would for a value it cannot write (a cycle, a
 * BigInt).
 */
export function writeJsonPieces(value: unknown, piece: (text: string) => void, chunk = STRING_CHUNK): void {
  walkJson(value, { string: (s) => writeString(s, piece, chunk), text: piece });
}

/**
 * The first `max` characters of `JSON.stringify(value)` (all of it when it is no longer) and the
 * length of the whole, making no more of the text than about that: what shows a value cut short (a
 * tool call's input in a compaction's summary request) when its JSON may be longer than a string
 * can be. Throws as {@link writeJsonPieces} does.
 */
export function jsonHead(value: unknown, max: number): { head: string; length: number } {
  const head: string[] = [];
  let room = max;
  let length = 0;
  const take = (text: string) => {
    const piece = text.length <= room ? text : text.slice(0, room);
    head.push(piece);
    room -= piece.length;
  };
  walkJson(value, {
    string(s) {
      const n = jsonStringLength(s);
      length += n;
      // Of a longer string, its first `room` characters: with the opening quote their JSON is more
      // than the head shows, so what is not the string's (a closing quote, the escape of a pair's
      // half cut from its other) is never shown.
      if (room > 0) take(JSON.stringify(n <= room ? s : s.slice(0, room)));
    },
    text(t) {
      length += t.length;
      if (room > 0) take(t);
    },
  });
  return { head: head.join(''), length };
}

/** A string's JSON, escaped `chunk` characters at a time; a cut never parts a surrogate pair (each half would be escaped alone). */
function writeString(s: string, piece: (text: string) => void, chunk: number): void {
  if (s.length <= chunk) return piece(JSON.stringify(s));
  piece('"');
  for (let at = 0; at < s.length; ) {
    let end = Math.min(at + chunk, s.length);
    // A chunk of one character that starts a pair takes both.
    if (end < s.length && isHighSurrogate(s.charCodeAt(end - 1)) && isLowSurrogate(s.charCodeAt(end))) end += end - 1 > at ? -1 : 1;
    piece(JSON.stringify(s.slice(at, end)).slice(1, -1));
    at = end;
  }
  piece('"');
}

/**
 * `JSON.parse` of the text that `slices` make joined, without joining them when that text is longer
 * than a string can be: the same value, or a SyntaxError where `JSON.parse` gives one.
 */
export function parseJsonSlices(slices: readonly string[], maxJoined = MAX_STRING_LENGTH): unknown {
  let length = 0;
  for (const s of slices) length += s.length;
  if (length <= maxJoined) return JSON.parse(slices.join(''));
  const parser = new SliceParser();
  for (const s of slices) parser.push(s);
  return parser.end();
}

type Frame = { array: unknown[] } | { object: Record<string, unknown>; key?: string };
/** What may come next: a value, an object's key (or its end), `:`, `,` (or the container's end), nothing. */
type Expect = 'value' | 'value-or-end' | 'key' | 'key-or-end' | 'colon' | 'comma-or-end' | 'nothing';

const WHITESPACE = /[ \t\n\r]/;
/** Characters of a number or of `true`, `false`, `null`: a token of them is parsed by `JSON.parse` itself. */
const SCALAR = /[-+.0-9a-zA-Z]/;

/**
 * A JSON parser fed text in slices cut anywhere (inside a string, an escape, a number). Strings are
 * decoded a slice at a time by `JSON.parse`, so a string whose escaped form is longer than V8's
 * longest string is read all the same, as long as the string itself is not.
 */
class SliceParser {
  private readonly stack: Frame[] = [];
  private expect: Expect = 'value';
  private root: unknown;
  /** The start of a token cut by a slice's end (an escape, a number), read with the next slice. */
  private carry = '';
  /** The decoded pieces of the string being read, and whether it is a key. */
  private string?: { pieces: string[]; key: boolean };

  push(slice: string, last = false): void {
    const text = this.carry + slice;
    this.carry = '';
    let i = 0;
    while (i < text.length) {
      if (this.string) {
        i = this.readString(text, i, last);
        if (this.string) return; // the string goes on in the next slice
        continue;
      }
      const c = text[i]!;
      if (WHITESPACE.test(c)) {
        i++;
        continue;
      }
      const top = this.stack.at(-1);
      if (c === '"' && (this.expect === 'value' || this.expect === 'value-or-end' || this.expect === 'key' || this.expect === 'key-or-end')) {
        this.string = { pieces: [], key: this.expect.startsWith('key') };
        i++;
      } else if (c === ':' && this.expect === 'colon') {
        this.expect = 'value';
        i++;
      } else if (c === ',' && this.expect === 'comma-or-end') {
        this.expect = top && 'array' in top ? 'value' : 'key';
        i++;
      } else if ((c === ']' || c === '}') && (this.expect === 'comma-or-end' || this.expect === (c === ']' ? 'value-or-end' : 'key-or-end')) && top && ('array' in top) === (c === ']')) {
        this.stack.pop();
        this.deliver('array' in top ? top.array : top.object);
        i++;
      } else if ((c === '[' || c === '{') && (this.expect === 'value' || this.expect === 'value-or-end')) {
        this.stack.push(c === '[' ? { array: [] } : { object: {} });
        this.expect = c === '[' ? 'value-or-end' : 'key-or-end';
        i++;
      } else if (SCALAR.test(c) && (this.expect === 'value' || this.expect === 'value-or-end')) {
        let end = i;
        while (end < text.length && SCALAR.test(text[end]!)) end++;
        if (end === text.length && !last) {
          this.carry = text.slice(i);
          return;
        }
        this.deliver(JSON.parse(text.slice(i, end)));
        i = end;
      } else {
        throw new SyntaxError(`Unexpected token ${JSON.stringify(c)} in JSON`);
      }
    }
  }

  /** The value, once every slice is pushed. */
  end(): unknown {
    this.push('', true);
    if (this.expect !== 'nothing' || this.string) throw new SyntaxError('Unexpected end of JSON input');
    return this.root;
  }

  /** Reads the current string from `i`: to its closing quote (then delivers it), or to the slice's end. */
  private readString(text: string, i: number, last: boolean): number {
    const string = this.string!;
    // The closing quote is the first one after an even run of backslashes (an odd run escapes it).
    for (let q = text.indexOf('"', i); q >= 0; q = text.indexOf('"', q + 1)) {
      let run = 0;
      while (q - run - 1 >= i && text.charCodeAt(q - run - 1) === 0x5c) run++;
      if (run % 2 === 1) continue;
      string.pieces.push(decode(text.slice(i, q)));
      this.string = undefined;
      const value = string.pieces.length === 1 ? string.pieces[0]! : string.pieces.join('');
      if (string.key) {
        (this.stack.at(-1) as { key?: string }).key = value;
        this.expect = 'colon';
      } else this.deliver(value);
      return q + 1;
    }
    if (last) throw new SyntaxError('Unterminated string in JSON');
    // No closing quote here: decode up to an escape the slice's end cuts, which goes on with the next one.
    let cut = text.length;
    const backslash = text.lastIndexOf('\\');
    if (backslash >= i && backslash >= text.length - 6) {
      let run = 1;
      while (backslash - run >= i && text.charCodeAt(backslash - run) === 0x5c) run++;
      if (run % 2 === 1 && (backslash === text.length - 1 || (text[backslash + 1] === 'u' && backslash + 6 > text.length))) cut = backslash;
    }
    string.pieces.push(decode(text.slice(i, cut)));
    this.carry = text.slice(cut);
    return text.length;
  }

  private deliver(value: unknown): void {
    const top = this.stack.at(-1);
    if (!top) {
      this.root = value;
      this.expect = 'nothing';
    } else if ('array' in top) {
      top.array.push(value);
      this.expect = 'comma-or-end';
    } else {
      // As JSON.parse makes it: an own property even for `__proto__`.
      Object.defineProperty(top.object, top.key!, { value, writable: true, enumerable: true, configurable: true });
      this.expect = 'comma-or-end';
    }
  }
}

/** The characters of a piece of a JSON string's body (whole escapes only). */
const decode = (body: string): string => JSON.parse(`"${body}"`) as string;
