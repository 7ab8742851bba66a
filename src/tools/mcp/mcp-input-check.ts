/**
 * The model's arguments checked against an MCP tool's `inputSchema` before the call (spec/tools.md
 * §7), so that a call that does not fit fails `invalid_params` saying what is wrong, as a built-in
 * tool's does (input-schema.ts), before anyone is asked to allow it and before the server sees it.
 * (Until 2026-12-07 they went to the server whatever they were: a server that checks nothing acted
 * on them, and the user was asked to allow a call that could only fail.)
 *
 * The schemas are the servers', in whatever JSON Schema they write, so this checker is one-sided:
 * it refuses only what every JSON Schema validator refuses. It checks the keywords that stand on
 * their own (`type`, `enum`, `const`, string and number bounds, `required`,
 * `properties`, `items`, array and object sizes, `additionalProperties`), and passes what it does
 * not understand: an unknown keyword or type is no check (keywords are a conjunction, so leaving one
 * out only lets more through); a node with a reference (`$ref`, resolved nowhere here) passes whole;
 * `additionalProperties` is left out where other keywords (`patternProperties`, `allOf`, …) could
 * admit a property, and `items` where it is a tuple or follows `prefixItems`; `format`,
 * `multipleOf` and `uniqueItems` are not checked, nor `pattern`: a server's regular expression run
 * here on the model's text could backtrack for minutes (`^(a+)+$`), and hold up every session of
 * the process, where in the server it holds up only that server. OpenAPI's `nullable: true` admits null. A
 * property test holds it to Ajv: whatever this refuses, Ajv refuses (test/property/tools/).
 */
import { elided, headOf } from '../../core/text-cut.js';

/** Nodes deeper than this pass unchecked (a schema is the server's: no recursion without end). */
const MAX_DEPTH = 64;
const JSON_TYPES = new Set(['null', 'boolean', 'object', 'array', 'number', 'integer', 'string']);
const TYPE_WORDS: Record<string, string> = { null: 'null', boolean: 'true or false', object: 'an object', array: 'an array', number: 'a number', integer: 'an integer', string: 'a string' };
/** Keywords with which a property `additionalProperties` forbids may still be admitted, or meant to be. */
const ADMITS_PROPERTIES = ['patternProperties', 'allOf', 'anyOf', 'oneOf', 'if', 'then', 'else', 'not', 'dependentSchemas', 'dependencies', 'unevaluatedProperties', '$dynamicRef', '$recursiveRef'];
const REFERENCES = ['$ref', '$dynamicRef', '$recursiveRef'];

type Node = Record<string, unknown>;

/** Why `input` does not fit `schema` (the first reason found, naming where), or undefined if it may. */
export function inputProblem(schema: unknown, input: unknown): string | undefined {
  return check(schema, input, '', 0);
}

function named(at: string): string {
  return at ? `"${at}"` : 'the arguments';
}

function isObject(v: unknown): v is Node {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isType(type: string, v: unknown): boolean {
  switch (type) {
    case 'null':
      return v === null;
    case 'boolean':
      return typeof v === 'boolean';
    case 'object':
      return isObject(v);
    case 'array':
      return Array.isArray(v);
    case 'number':
      return typeof v === 'number';
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    default:
      return typeof v === 'string';
  }
}

/** JSON equality, as `enum` and `const` compare (objects by their members, whatever their order). */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((x, i) => same(x, (b as unknown[])[i]));
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && same((a as Node)[k], (b as Node)[k]));
}

const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const count = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0;

function check(schema: unknown, v: unknown, at: string, depth: number): string | undefined {
  if (schema === false) return at ? `${named(at)} is not allowed.` : 'the tool takes no arguments.';
  if (!isObject(schema) || depth > MAX_DEPTH) return undefined;
  const s = schema;
  if (REFERENCES.some((k) => k in s)) return undefined;
  if (v === null && s.nullable === true) return undefined;
  const types = typeof s.type === 'string' ? [s.type] : Array.isArray(s.type) ? s.type : undefined;
  if (types?.length && types.every((t) => typeof t === 'string' && JSON_TYPES.has(t)) && !types.some((t) => isType(t as string, v))) {
    return `${named(at)} must be ${types.map((t) => TYPE_WORDS[t as string]).join(' or ')}.`;
  }
  // An empty enum (which JSON Schema advises against) admits nothing to a validator; here, no check.
  if (Array.isArray(s.enum) && s.enum.length > 0 && !s.enum.some((e) => same(e, v))) {
    const shown = JSON.stringify(s.enum);
    return `${named(at)} must be one of ${elided(shown, 300)}.`;
  }
  if ('const' in s && !same(s.const, v)) return `${named(at)} must be ${headOf(JSON.stringify(s.const) ?? 'undefined', 300)}.`;
  if (typeof v === 'string') return checkString(s, v, at);
  if (typeof v === 'number') return checkNumber(s, v, at);
  if (Array.isArray(v)) return checkArray(s, v, at, depth);
  if (isObject(v)) return checkObject(s, v, at, depth);
  return undefined;
}

/** JSON Schema counts a string's characters (code points), not its UTF-16 units; without copying it. */
function codePoints(v: string): number {
  let n = 0;
  for (let i = 0; i < v.length; i++, n++) {
    const unit = v.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < v.length) {
      const next = v.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
  }
  return n;
}

function checkString(s: Node, v: string, at: string): string | undefined {
  const length = count(s.minLength) || count(s.maxLength) ? codePoints(v) : 0;
  if (count(s.minLength) && length < s.minLength) return `${named(at)} must have at least ${s.minLength} character(s).`;
  if (count(s.maxLength) && length > s.maxLength) return `${named(at)} must have at most ${s.maxLength} characters.`;
  return undefined;
}

function checkNumber(s: Node, v: number, at: string): string | undefined {
  if (num(s.minimum) && v < s.minimum) return `${named(at)} must be at least ${s.minimum}.`;
  if (num(s.maximum) && v > s.maximum) return `${named(at)} must be at most ${s.maximum}.`;
  // Numbers only: draft 4's boolean exclusiveMinimum/Maximum modify minimum/maximum, and pass here.
  if (num(s.exclusiveMinimum) && v <= s.exclusiveMinimum) return `${named(at)} must be more than ${s.exclusiveMinimum}.`;
  if (num(s.exclusiveMaximum) && v >= s.exclusiveMaximum) return `${named(at)} must be less than ${s.exclusiveMaximum}.`;
  return undefined;
}

function checkArray(s: Node, v: unknown[], at: string, depth: number): string | undefined {
  if (count(s.minItems) && v.length < s.minItems) return `${named(at)} must have at least ${s.minItems} item(s).`;
  if (count(s.maxItems) && v.length > s.maxItems) return `${named(at)} must have at most ${s.maxItems} items.`;
  // A tuple's `items` (an array, draft 7) or the `items` after `prefixItems` (2020-12) is not checked.
  if ((isObject(s.items) || s.items === false) && !('prefixItems' in s)) {
    for (let i = 0; i < v.length; i++) {
      const problem = check(s.items, v[i], `${at || 'arguments'}[${i}]`, depth + 1);
      if (problem) return problem;
    }
  }
  return undefined;
}

function checkObject(s: Node, v: Node, at: string, depth: number): string | undefined {
  const keys = Object.keys(v);
  if (count(s.minProperties) && keys.length < s.minProperties) return `${named(at)} must have at least ${s.minProperties} propert${s.minProperties === 1 ? 'y' : 'ies'}.`;
  if (count(s.maxProperties) && keys.length > s.maxProperties) return `${named(at)} must have at most ${s.maxProperties} properties.`;
  const path = (key: string) => (at ? `${at}.${key}` : key);
  if (Array.isArray(s.required)) {
    for (const key of s.required) if (typeof key === 'string' && !Object.hasOwn(v, key)) return `${named(path(key))} is required.`;
  }
  const properties = isObject(s.properties) ? s.properties : {};
  const additional = ADMITS_PROPERTIES.some((k) => k in s) ? undefined : s.additionalProperties;
  for (const key of keys) {
    // Own properties only: `constructor` or `__proto__` must not find Object.prototype's members.
    if (Object.hasOwn(properties, key)) {
      const problem = check(properties[key], v[key], path(key), depth + 1);
      if (problem) return problem;
    } else if (additional === false) {
      const allowed = Object.keys(properties);
      return `unknown property ${named(path(key))} (${allowed.length ? `allowed: ${allowed.join(', ')}` : 'none is allowed'}).`;
    } else if (isObject(additional)) {
      const problem = check(additional, v[key], path(key), depth + 1);
      if (problem) return problem;
    }
  }
  return undefined;
}
