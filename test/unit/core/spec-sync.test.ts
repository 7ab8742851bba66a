// The specs a client reads must match the code: spec/errors.md against ERROR_CODES and the CLI's codes, and
// spec/events.schema.json against the zod source it is generated from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ERROR_CODES } from '../../../src/core/errors.js';
import { eventJsonSchema } from '../../../src/core/event-schema.js';
import { CLI_ERROR_CODES, CliError } from '../../../src/cli/cli-io.js';

test('spec/errors.md lists exactly the error codes, with their JSON-RPC and HTTP codes', () => {
  const md = readFileSync('spec/errors.md', 'utf8');
  const rows = [...md.matchAll(/^\|\s*`([a-z_]+)`\s*\|\s*(-?\d+)\s*\|\s*(\d+)\s*\|/gm)].map((m) => [m[1], Number(m[2]), Number(m[3])]);
  const expected = Object.entries(ERROR_CODES).map(([code, v]) => [code, v.rpc, v.http]);
  assert.deepEqual(rows, expected);
});

test("spec/errors.md lists exactly the CLI's own codes, with their exit codes", () => {
  const md = readFileSync('spec/errors.md', 'utf8');
  const section = md.slice(md.indexOf("## The CLI's own codes"));
  const rows = [...section.matchAll(/^\|\s*`([a-z_]+)`\s*\|\s*(\d+)\s*\|/gm)].map((m) => [m[1], Number(m[2])]);
  assert.deepEqual(rows, CLI_ERROR_CODES.map((code) => [code, new CliError(code, '').exitCode]));
});

test('JSON-RPC codes are unique', () => {
  const rpc = Object.values(ERROR_CODES).map((v) => v.rpc);
  assert.equal(new Set(rpc).size, rpc.length);
});

test('spec/events.schema.json is the schema generated from src/core/events.ts (run scripts/gen-event-schema.js)', () => {
  const committed = JSON.parse(readFileSync('spec/events.schema.json', 'utf8'));
  assert.deepEqual(committed, JSON.parse(JSON.stringify(eventJsonSchema())));
});
