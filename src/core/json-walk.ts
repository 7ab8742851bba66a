/**
 * The one walk of a value as `JSON.stringify` writes it (ECMA-262 §25.5.2: SerializeJSONProperty,
 * toJSON, boxed primitives, what it leaves out), that both the counters (json-bytes.ts) and the
 * piecewise writer (json-slices.ts) follow, so that what is counted is what is written. A walk makes
 * no text of its own but keys' and scalars': a value's JSON may be longer than V8's longest string.
 */

/** What a walk meets, in the order of the JSON text. */
export interface JsonVisitor {
  /** A string, a key or a value, as it is (its JSON is for the visitor to count or write). */
  string(s: string): void;
  /** Any other text, all ASCII: punctuation, a number, `true`, `false`, `null`. */
  text(t: string): void;
}

/**
 * Walks `value` as `JSON.stringify(value)` writes it; meets nothing for a value it writes nothing for
 * (`undefined`, a function). Throws what `JSON.stringify` would for a value it cannot write (a cycle, a
 * BigInt), and a RangeError for nesting deeper than the stack allows.
 */
export function walkJson(value: unknown, visit: JsonVisitor): void {
  const v = resolve(value, '');
  if (writes(v)) walk(v, visit, new Set());
}

/** `v` as `JSON.stringify` sees it (ECMA-262 SerializeJSONProperty): after `toJSON`, unboxed. */
function resolve(v: unknown, key: string): unknown {
  if ((typeof v === 'object' && v !== null) || typeof v === 'bigint') {
    const toJSON = (v as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') v = toJSON.call(v, key);
  }
  return v instanceof Number || v instanceof String || v instanceof Boolean || v instanceof BigInt ? v.valueOf() : v;
}

/** Whether a resolved value has JSON (an object's property with none is left out, an array's is `null`). */
const writes = (v: unknown) => v !== undefined && typeof v !== 'function' && typeof v !== 'symbol';

function walk(v: unknown, visit: JsonVisitor, ancestors: Set<object>): void {
  if (typeof v === 'string') return visit.string(v);
  if (typeof v !== 'object' || v === null) return visit.text(JSON.stringify(v)); // a number, a boolean, null; a BigInt throws
  if (ancestors.has(v)) throw new TypeError('Converting circular structure to JSON');
  ancestors.add(v);
  if (Array.isArray(v)) {
    visit.text('[');
    for (let i = 0; i < v.length; i++) {
      if (i > 0) visit.text(',');
      const item = resolve(v[i], String(i));
      if (writes(item)) walk(item, visit, ancestors);
      else visit.text('null');
    }
    visit.text(']');
  } else {
    visit.text('{');
    let first = true;
    for (const key of Object.keys(v)) {
      const item = resolve((v as Record<string, unknown>)[key], key);
      if (!writes(item)) continue;
      if (!first) visit.text(',');
      visit.string(key);
      visit.text(':');
      walk(item, visit, ancestors);
      first = false;
    }
    visit.text('}');
  }
  ancestors.delete(v);
}
