// The daemon refuses, without waking a child, any request method a child would answer -32601: the
// list it checks must be exactly the methods the agent app registers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { AGENT_REQUEST_METHODS } from '../../../src/acp/agent-methods.js';

test('AGENT_REQUEST_METHODS is exactly the request methods src/acp/agent.app.ts registers', () => {
  const source = readFileSync(resolve('src/acp/agent.app.ts'), 'utf8');
  const registered = [...source.matchAll(/\.onRequest\(\s*'([^']+)'/g)].map((m) => m[1]!);
  assert.ok(registered.length >= 10, `found ${registered.length} registrations: the pattern no longer matches the app's code`);
  assert.deepEqual([...new Set(registered)].sort(), [...AGENT_REQUEST_METHODS].sort());
});
