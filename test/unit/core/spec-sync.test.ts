// The specs a client reads must match the code: spec/errors.md against ERROR_CODES, and
// spec/events.schema.json against the zod source it is generated from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ERROR_CODES } from '../../../src/core/errors.js';
import { eventJsonSchema } from '../../../src/core/event-schema.js';

test('spec/errors.md lists exactly the error codes, with their JSON-RPC and HTTP codes', () => {
  const md = readFileSync('spec/errors.md', 'utf8');
  const rows = [...md.matchAll(/^\|\s*`([a-z_]+)`\s*\|\s*(-?\d+)\s*\|\s*(\d+)\s*\|/gm)].map((m) => [m[1], Number(m[2]), Number(m[3])]);
  const expected = Object.entries(ERROR_CODES).map(([code, v]) => [code, v.rpc, v.http]);
  assert.deepEqual(rows, expected);
});

test('JSON-RPC codes are unique', () => {
  const rpc = Object.values(ERROR_CODES).map((v) => v.rpc);
  assert.equal(new Set(rpc).size, rpc.length);
});

test('spec/events.schema.json is the schema generated from src/core/events.ts (run scripts/gen-event-schema.js)', () => {
  const committed = JSON.parse(readFileSync('spec/events.schema.json', 'utf8'));
  assert.deepEqual(committed, JSON.parse(JSON.stringify(eventJsonSchema())));
});
