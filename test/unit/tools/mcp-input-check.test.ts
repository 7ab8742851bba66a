// An MCP tool's input checked against its inputSchema: what every validator refuses is refused with
// where and why; what the checker does not understand passes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inputProblem } from '../../../src/tools/mcp/mcp-input-check.js';

const object = (properties: Record<string, unknown>, more: Record<string, unknown> = {}) => ({ type: 'object', properties, ...more });

test('what does not fit is refused, naming where and why', () => {
  const schema = object(
    {
      text: { type: 'string', minLength: 1, maxLength: 5 },
      n: { type: 'integer', minimum: 0, maximum: 10 },
      ratio: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
      mode: { enum: ['fast', 'slow'] },
      flag: { type: 'boolean' },
      tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 2 },
      where: object({ line: { type: 'integer' } }, { required: ['line'], additionalProperties: false }),
      kind: { const: 'x' },
      maybe: { type: ['string', 'null'] },
    },
    { required: ['text'], additionalProperties: false },
  );
  const cases: [unknown, string][] = [
    [[], 'the arguments must be an object.'],
    [{}, '"text" is required.'],
    [{ text: 5 }, '"text" must be a string.'],
    [{ text: '' }, '"text" must have at least 1 character(s).'],
    [{ text: 'abcdef' }, '"text" must have at most 5 characters.'],
    [{ text: 'a', n: 1.5 }, '"n" must be an integer.'],
    [{ text: 'a', n: -1 }, '"n" must be at least 0.'],
    [{ text: 'a', n: 11 }, '"n" must be at most 10.'],
    [{ text: 'a', ratio: 0 }, '"ratio" must be more than 0.'],
    [{ text: 'a', ratio: 1 }, '"ratio" must be less than 1.'],
    [{ text: 'a', mode: 'medium' }, '"mode" must be one of ["fast","slow"].'],
    [{ text: 'a', flag: 'yes' }, '"flag" must be true or false.'],
    [{ text: 'a', tags: [] }, '"tags" must have at least 1 item(s).'],
    [{ text: 'a', tags: ['a', 'b', 'c'] }, '"tags" must have at most 2 items.'],
    [{ text: 'a', tags: ['a', 2] }, '"tags[1]" must be a string.'],
    [{ text: 'a', where: {} }, '"where.line" is required.'],
    [{ text: 'a', where: { line: 'one' } }, '"where.line" must be an integer.'],
    [{ text: 'a', where: { line: 1, col: 2 } }, 'unknown property "where.col" (allowed: line).'],
    [{ text: 'a', kind: 'y' }, '"kind" must be "x".'],
    [{ text: 'a', maybe: 3 }, '"maybe" must be a string or null.'],
    [{ text: 'a', other: 1 }, 'unknown property "other" (allowed: text, n, ratio, mode, flag, tags, where, kind, maybe).'],
    // Own properties only: Object.prototype's members are not properties of the schema.
    [{ text: 'a', constructor: 1 }, 'unknown property "constructor" (allowed: text, n, ratio, mode, flag, tags, where, kind, maybe).'],
  ];
  for (const [input, problem] of cases) assert.equal(inputProblem(schema, input), problem, JSON.stringify(input));
  assert.equal(inputProblem(schema, { text: 'ab', n: 3, ratio: 0.5, mode: 'fast', flag: false, tags: ['x'], where: { line: 2 }, kind: 'x', maybe: null }), undefined);
  // Characters, not UTF-16 units, as JSON Schema counts them: two emoji are 2 of at most 2.
  assert.equal(inputProblem(object({ s: { type: 'string', maxLength: 2 } }), { s: '😀😀' }), undefined);
  assert.equal(inputProblem(object({ s: { type: 'string', maxLength: 2 } }), { s: '😀😀😀' }), '"s" must have at most 2 characters.');
  // A lone surrogate is a character of its own.
  assert.equal(inputProblem(object({ s: { type: 'string', minLength: 2 } }), { s: '\ud83d' }), '"s" must have at least 2 character(s).');
  assert.equal(inputProblem(object({ s: false }), { s: 1 }), '"s" is not allowed.');
  assert.equal(inputProblem(object({ o: { enum: [{ a: 1, b: [2] }] } }), { o: { b: [2], a: 1 } }), undefined, 'enum compares JSON values');
});

test('what the checker does not understand passes: references, combinations, unknown keywords and types, formats', () => {
  const passes: [unknown, unknown][] = [
    [true, { anything: 1 }],
    [{}, { anything: 1 }],
    [object({ a: { $ref: '#/$defs/x' } }, { $defs: { x: { type: 'string' } } }), { a: 5 }],
    // Draft 7 ignores a reference's siblings.
    [object({ a: { $ref: '#/$defs/x', type: 'string' } }, { $defs: { x: {} } }), { a: 5 }],
    [{ $ref: '#/definitions/args', definitions: { args: object({}, { additionalProperties: false }) } }, { x: 1 }],
    // additionalProperties with what may admit a property besides `properties`.
    [object({ a: { type: 'string' } }, { patternProperties: { '^x': {} }, additionalProperties: false }), { x1: 1 }],
    [object({}, { allOf: [object({ b: {} })], additionalProperties: false }), { b: 1 }],
    [object({ a: { anyOf: [{ type: 'string' }, { type: 'number' }] } }), { a: true }],
    [object({ a: { oneOf: [{ type: 'string' }] } }), { a: 1 }],
    [object({ a: { type: 'widget' } }), { a: 1 }],
    [object({ a: { type: ['string', 'widget'] } }), { a: 1 }],
    [object({ a: { type: 'string', format: 'email' } }), { a: 'not an address' }],
    [object({ a: { type: 'number', multipleOf: 0.1 } }), { a: 0.3 }],
    [object({ a: { type: 'array', uniqueItems: true } }), { a: [1, 1] }],
    // A server's pattern is its own to run (one that backtracks for ever must not hold up troupe).
    [object({ a: { type: 'string', pattern: '^(a+)+$' } }), { a: 'aaa!' }],
    // A tuple (draft 7) and items after prefixItems (2020-12) are not checked.
    [object({ a: { type: 'array', items: [{ type: 'string' }] } }), { a: [1] }],
    [object({ a: { type: 'array', prefixItems: [{ type: 'number' }], items: { type: 'string' } } }), { a: [1, 2] }],
    // Draft 4's boolean exclusiveMinimum modifies minimum; OpenAPI's nullable admits null.
    [object({ a: { type: 'number', minimum: 0, exclusiveMinimum: true } }), { a: 0 }],
    [object({ a: { type: 'string', nullable: true } }), { a: null }],
    [object({ a: { enum: [] } }), { a: 1 }],
    // Bounds that are not counts (a schema JSON Schema does not allow) check nothing.
    [object({ a: { type: 'string', maxLength: -1 } }), { a: 'x' }],
  ];
  for (const [schema, input] of passes) assert.equal(inputProblem(schema, input), undefined, JSON.stringify(schema));
  // Deeper than the checker goes: passes rather than recursing without end.
  let deep: Record<string, unknown> = { type: 'string' };
  let value: unknown = 1;
  for (let i = 0; i < 500; i++) {
    deep = object({ a: deep });
    value = { a: value };
  }
  assert.equal(inputProblem(deep, value), undefined);
});
