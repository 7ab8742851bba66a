/**
 * A bound on the nesting of JSON the daemon takes from clients. JSON.parse reads any depth, but
 * what is parsed is serialized again on its way to a child (JSON.stringify recurses, and overflows
 * the stack somewhere past a thousand levels): a message accepted here and refused there would be
 * acknowledged and never answered. No ACP message comes near this; the event log allows the same
 * depth (src/store/strict-json.codec.ts).
 */
export const MAX_JSON_DEPTH = 256;

/** True when `value` nests objects and arrays deeper than `limit` levels. Recursion stops at the limit. */
export function nestedTooDeep(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (limit <= 0) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (nestedTooDeep(item, limit - 1)) return true;
    return false;
  }
  for (const key in value) if (nestedTooDeep((value as Record<string, unknown>)[key], limit - 1)) return true;
  return false;
}
