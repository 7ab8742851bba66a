/**
 * Strict JSON projection of event payloads. An event must mean the same thing to a live subscriber,
 * to a replay from msgpack and to a JSON client, so only values JSON represents exactly are
 * accepted; everything else is refused before the event gets a seq. See spec/event-log.md §5.
 */
import { TroupeError } from '../core/errors.js';
import { jsonStringBytes, PLAIN_JSON_CHARS } from '../core/json-bytes.js';

/** Default largest event, in bytes of compact JSON. */
export const DEFAULT_MAX_EVENT_BYTES = 1024 * 1024;
/** The configurable range of the event size limit. */
export const MIN_MAX_EVENT_BYTES = 1024;
export const MAX_MAX_EVENT_BYTES = 8 * 1024 * 1024;
/** Nesting deeper than this is refused (it would only come from a bug, and recursion has a bound). */
export const MAX_DEPTH = 256;

/** Checks a configured event size limit; `undefined` gives the default. */
export function resolveMaxEventBytes(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_MAX_EVENT_BYTES;
  if (!Number.isInteger(limit) || limit < MIN_MAX_EVENT_BYTES || limit > MAX_MAX_EVENT_BYTES) {
    throw new TroupeError('invalid_params', `maxEventBytes must be an integer from ${MIN_MAX_EVENT_BYTES} to ${MAX_MAX_EVENT_BYTES}, got ${limit}`, {
      min: MIN_MAX_EVENT_BYTES,
      max: MAX_MAX_EVENT_BYTES,
    });
  }
  return limit;
}

/** A projected value and the byte length of its compact JSON text. */
export interface Projection<T = unknown> {
  value: T;
  bytes: number;
}

/** ES2024's String methods (Node 20 has them; the project's lib is ES2023). */
type WellFormable = string & { isWellFormed(): boolean; toWellFormed(): string };

/**
 * Whether the log keeps `s` as it is. A lone surrogate (half of a UTF-16 pair) cannot be stored as
 * UTF-8: the file would hold U+FFFD in its place, so the projection puts it there already, and live
 * readers see the same text as a replay.
 */
export function isWellFormed(s: string): boolean {
  return (s as WellFormable).isWellFormed();
}

function invalid(path: (string | number)[], why: string): TroupeError {
  const where = '$' + path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`)).join('');
  return new TroupeError('invalid_event_payload', `event payload is not strict JSON at ${where}: ${why}`, { path: where, reason: why });
}

function numberBytes(v: number): number {
  // Integers are the common case (seqs, counts, times): count digits without building a string.
  if (Number.isSafeInteger(v)) {
    let n = v < 0 ? 2 : 1;
    for (let a = Math.abs(v); a >= 10; a = Math.floor(a / 10)) n++;
    return n;
  }
  return String(v).length;
}

class Projector {
  bytes = 0;
  /** The keys from the root to the value being projected; turned into a path only for an error. */
  private readonly path: (string | number)[] = [];
  /** The objects from the root down: a cycle is an object that is its own ancestor. */
  private readonly ancestors: object[] = [];
  constructor(
    private readonly maxBytes: number,
    private readonly omitAtRoot: ReadonlySet<string> | undefined,
  ) {}

  private add(n: number): void {
    this.bytes += n;
    if (this.bytes > this.maxBytes) {
      throw new TroupeError('event_too_large', `event is larger than the limit of ${this.maxBytes} bytes`, { limit: this.maxBytes });
    }
  }

  /** Counts a string's JSON bytes; returns it as the log keeps it (see isWellFormed). */
  private text(s: string): string {
    if (PLAIN_JSON_CHARS.test(s)) {
      this.add(s.length + 2);
      return s;
    }
    const text = isWellFormed(s) ? s : (s as WellFormable).toWellFormed();
    // Counted, not made: a string whose JSON is over V8's longest string is event_too_large, not a RangeError.
    this.add(jsonStringBytes(text));
    return text;
  }

  value(v: unknown): unknown {
    switch (typeof v) {
      case 'string':
        return this.text(v);
      case 'number':
        if (!Number.isFinite(v)) throw invalid(this.path, `${v} is not a JSON number`);
        // JSON has no negative zero: keep what a JSON round trip would give.
        if (v === 0) {
          this.add(1);
          return 0;
        }
        this.add(numberBytes(v));
        return v;
      case 'boolean':
        this.add(v ? 4 : 5);
        return v;
      case 'object':
        if (v === null) {
          this.add(4);
          return null;
        }
        return this.object(v);
      default:
        throw invalid(this.path, `a ${typeof v} is not JSON`);
    }
  }

  private object(v: object): unknown {
    const path = this.path;
    if (this.ancestors.length >= MAX_DEPTH) throw invalid(path, `nested deeper than ${MAX_DEPTH}`);
    const proto = Object.getPrototypeOf(v);
    if (proto === Object.prototype || proto === null) {
      if (this.ancestors.includes(v)) throw invalid(path, 'cycle');
      if (Object.getOwnPropertySymbols(v).length > 0) throw invalid(path, 'symbol keys are not JSON');
      this.ancestors.push(v);
      const out: Record<string, unknown> = {};
      let n = 0;
      let renamed = false;
      for (const key in v) {
        if (!Object.prototype.hasOwnProperty.call(v, key)) continue;
        const item = (v as Record<string, unknown>)[key];
        // Like JSON.stringify, an absent optional field is simply left out.
        if (item === undefined || (this.omitAtRoot !== undefined && this.ancestors.length === 1 && this.omitAtRoot.has(key))) continue;
        path.push(key);
        if (key === '__proto__') throw invalid(path, 'the key __proto__ is refused');
        const name = this.text(key);
        // Two keys that are one text once their lone surrogates are replaced: one would be lost.
        if ((renamed || name !== key) && Object.hasOwn(out, name)) throw invalid(path, 'two keys are the same text once their lone surrogates are replaced');
        renamed ||= name !== key;
        this.add(1);
        out[name] = this.value(item);
        path.pop();
        n++;
      }
      this.add(n > 0 ? n + 1 : 2);
      this.ancestors.pop();
      return out;
    }
    if (Array.isArray(v)) {
      if (proto !== Array.prototype) throw invalid(path, 'an array subclass is not JSON');
      if (this.ancestors.includes(v)) throw invalid(path, 'cycle');
      this.ancestors.push(v);
      const out = new Array<unknown>(v.length);
      this.add(v.length > 0 ? v.length + 1 : 2);
      for (let i = 0; i < v.length; i++) {
        path.push(i);
        if (!(i in v)) throw invalid(path, 'sparse array');
        const item = v[i];
        if (item === undefined) throw invalid(path, 'undefined in an array');
        out[i] = this.value(item);
        path.pop();
      }
      this.ancestors.pop();
      return out;
    }
    if (v instanceof Uint8Array && (proto === Uint8Array.prototype || Buffer.isBuffer(v))) {
      const b64 = Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
      this.add(14 + b64.length);
      return { $base64: b64 };
    }
    const name = (proto && typeof proto.constructor === 'function' && proto.constructor.name) || 'unknown';
    throw invalid(path, `a ${name} object is not JSON`);
  }
}

/**
 * Projects `value` onto strict JSON: a deep copy in which byte arrays become `{"$base64": …}`.
 * Throws `invalid_event_payload` for NaN, ±Infinity, cycles, symbol keys, functions, bigints,
 * undefined array items and non-plain objects (Map, Date, class instances…), and `event_too_large`
 * once the compact JSON text would exceed `maxBytes`. Keys in `omitAtRoot` are left out of the
 * top-level object (cheaper than deleting them afterwards, which would slow the object down).
 */
export function projectStrictJson(value: unknown, maxBytes: number = DEFAULT_MAX_EVENT_BYTES, omitAtRoot?: ReadonlySet<string>): Projection {
  const p = new Projector(maxBytes, omitAtRoot);
  const out = p.value(value);
  return { value: out, bytes: p.bytes };
}
