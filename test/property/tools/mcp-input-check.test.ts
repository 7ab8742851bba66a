// The MCP input checker refuses only what a full JSON Schema validator refuses: for random schemas
// of the keywords it reads (and some it does not) and random JSON values, whatever it refuses Ajv
// refuses too, read as draft 7 and as 2020-12 (MCP's default dialect).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { inputProblem } from '../../../src/tools/mcp/mcp-input-check.js';
import { fcRuns, fcSeed } from '../../support/fc-seed.js';

// (Not `__proto__`, which Ajv skips as a schema's property.)
const key = fc.constantFrom('a', 'b', 'c', 'constructor');
const small = fc.nat({ max: 4 });
const num = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.double({ min: -5, max: 5, noNaN: true }));
// Ajv's equality (enum, const) calls a value's own `valueOf` or `toString`: no value here has a key
// that Object.prototype has (JSON Schema and the checker make nothing of such names).
const prototypeFree = (v: unknown): boolean =>
  Array.isArray(v) ? v.every(prototypeFree) : typeof v !== 'object' || v === null || Object.entries(v).every(([k, x]) => !(k in Object.prototype) && prototypeFree(x));
const value = fc
  .jsonValue({ maxDepth: 3, stringUnit: 'binary' })
  .map((v) => JSON.parse(JSON.stringify(v)) as unknown)
  .filter(prototypeFree);
// (A type JSON Schema does not name makes a schema Ajv refuses: the unit tests have those.)
const typeName = fc.constantFrom('null', 'boolean', 'object', 'array', 'number', 'integer', 'string');

// A node is a few keywords (at most 4), nested at most 3 deep: small schemas compile fast.
const { schema } = fc.letrec<{ schema: unknown; node: Record<string, unknown> }>((tie) => {
  const keyword = <T>(name: string, arb: fc.Arbitrary<T>) => arb.map((v) => [name, v] as [string, unknown]);
  return {
    schema: fc.oneof({ maxDepth: 3, depthIdentifier: 'schema' }, fc.boolean(), tie('node')),
    node: fc
      .uniqueArray(
        fc.oneof(
          keyword('type', fc.oneof(typeName, fc.uniqueArray(typeName, { minLength: 1, maxLength: 3 }))),
          keyword('enum', fc.array(value, { minLength: 1, maxLength: 3 })),
          keyword('const', value),
          // Ajv reads OpenAPI's nullable too (only `true`, and only with a type: see below).
          keyword('nullable', fc.constant(true)),
          keyword('minLength', small),
          keyword('maxLength', small),
          keyword('pattern', fc.constantFrom('^a', 'b$', '^\\p{L}+$', '.')),
          keyword('minimum', num),
          keyword('maximum', num),
          keyword('exclusiveMinimum', num),
          keyword('exclusiveMaximum', num),
          keyword('minItems', small),
          keyword('maxItems', small),
          keyword('items', tie('schema')),
          keyword('prefixItems', fc.array(tie('schema'), { minLength: 1, maxLength: 2 })),
          keyword('minProperties', small),
          keyword('maxProperties', small),
          keyword('required', fc.uniqueArray(key, { maxLength: 3 })),
          keyword('properties', fc.dictionary(key, tie('schema'), { maxKeys: 3 })),
          keyword('additionalProperties', tie('schema')),
          keyword('patternProperties', fc.dictionary(fc.constantFrom('^a', '^c'), tie('schema'), { maxKeys: 1 })),
          keyword('allOf', fc.array(tie('schema'), { minLength: 1, maxLength: 2 })),
          keyword('anyOf', fc.array(tie('schema'), { minLength: 1, maxLength: 2 })),
          keyword('format', fc.constantFrom('email', 'date-time', 'uri')),
          keyword('multipleOf', fc.constantFrom(0.5, 2)),
          keyword('uniqueItems', fc.boolean()),
        ),
        { maxLength: 4, selector: ([name]) => name },
      )
      .map((entries) => Object.fromEntries(entries))
      .map(({ nullable, ...node }) => (nullable && 'type' in node ? { ...node, nullable } : node)),
  };
});

// ownProperties: by default Ajv finds `required: ["constructor"]` in `{}` (Object.prototype's).
const options = { strict: false, logger: false, ownProperties: true } as const;
const validators = [new Ajv(options), new Ajv2020(options)];

test('whatever the MCP input checker refuses, Ajv refuses (draft 7 and 2020-12)', () => {
  const seed = fcSeed('mcp-input-check');
  let refused = 0;
  let compared = 0;
  const input = fc.oneof(value, fc.dictionary(key, value, { maxKeys: 3 }));
  fc.assert(
    // Several inputs for each schema: compiling is what costs.
    fc.property(schema, fc.array(input, { minLength: 1, maxLength: 8 }), (s, inputs) => {
      const problems = inputs.map((v) => inputProblem(s, v));
      refused += problems.filter((p) => p !== undefined).length;
      for (const ajv of validators) {
        let validate;
        try {
          validate = ajv.compile(s as object);
        } catch {
          continue; // a schema Ajv does not take (an enum with two equal values): nothing to compare with
        }
        inputs.forEach((v, i) => {
          if (problems[i] === undefined) return;
          compared++;
          assert.equal(validate(v), false, `refused (${problems[i]}) what Ajv accepts: ${JSON.stringify(s)} ${JSON.stringify(v)}`);
        });
      }
    }),
    { seed, numRuns: fcRuns(1500) },
  );
  // The property says something only if the checker refuses, and Ajv is asked, often enough.
  assert.ok(refused > 300 && compared > 300, `${refused} refusals, ${compared} compared`);
});
