// The MCP times an operator sets through the environment: each value that is not a whole number of
// 1 or more falls back to the default, saying so; one past what a timer can wait is that longest wait.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_CALL_MAX_TOTAL_MS, DEFAULT_START_TIMEOUT_MS, mcpLimitsFromEnv } from '../../../src/acp/mcp-limits.js';
import { MAX_TIMER_MS } from '../../../src/core/option-values.js';

function limits(env: NodeJS.ProcessEnv) {
  const warnings: { message: string; fields?: unknown }[] = [];
  const keep = () => undefined;
  const got = mcpLimitsFromEnv(env, { debug: keep, info: keep, error: keep, warn: (message, fields) => void warnings.push({ message, fields }) });
  return { ...got, warnings };
}

test('TROUPE_MCP_CALL_MAX_MS: unset or empty is the default, silently; a whole number is taken, spaces around it allowed', () => {
  for (const value of [undefined, '', '  ']) {
    assert.deepEqual(limits({ TROUPE_MCP_CALL_MAX_MS: value }), { startTimeoutMs: DEFAULT_START_TIMEOUT_MS, callMaxTotalMs: DEFAULT_CALL_MAX_TOTAL_MS, warnings: [] }, String(value));
  }
  assert.equal(DEFAULT_CALL_MAX_TOTAL_MS, 3_600_000);
  for (const [value, ms] of [['1', 1], ['5000', 5000], [' 90000 ', 90_000], [String(MAX_TIMER_MS), MAX_TIMER_MS]] as const) {
    assert.deepEqual(limits({ TROUPE_MCP_CALL_MAX_MS: value }), { startTimeoutMs: DEFAULT_START_TIMEOUT_MS, callMaxTotalMs: ms, warnings: [] }, value);
  }
});

test('TROUPE_MCP_CALL_MAX_MS: 0, negative, fractional or not a number is the default, with a warning naming the variable and its value', () => {
  for (const value of ['0', '-5', '-0', '1.5', 'abc', '1e6', 'Infinity', 'NaN', '0x10', '10ms', '1_000']) {
    const got = limits({ TROUPE_MCP_CALL_MAX_MS: value });
    assert.equal(got.callMaxTotalMs, DEFAULT_CALL_MAX_TOTAL_MS, value);
    assert.deepEqual(got.warnings, [{ message: 'TROUPE_MCP_CALL_MAX_MS is not a whole number of milliseconds of 1 or more; using the default', fields: { value, defaultMs: DEFAULT_CALL_MAX_TOTAL_MS } }], value);
  }
});

test('TROUPE_MCP_CALL_MAX_MS: past the longest wait of a timer (2^31-1 ms, which Node would run after 1 ms) is that wait, with a warning', () => {
  for (const value of [String(MAX_TIMER_MS + 1), '9999999999', '9'.repeat(400)]) {
    const got = limits({ TROUPE_MCP_CALL_MAX_MS: value });
    assert.equal(got.callMaxTotalMs, MAX_TIMER_MS, value);
    assert.deepEqual(got.warnings, [{ message: 'TROUPE_MCP_CALL_MAX_MS is more than the longest time troupe waits; using that', fields: { value, usedMs: MAX_TIMER_MS } }]);
  }
});

test('TROUPE_MCP_START_TIMEOUT_MS is read the same way, on its own', () => {
  assert.deepEqual(limits({ TROUPE_MCP_START_TIMEOUT_MS: '600000', TROUPE_MCP_CALL_MAX_MS: '0' }).startTimeoutMs, 600_000);
  const bad = limits({ TROUPE_MCP_START_TIMEOUT_MS: 'soon' });
  assert.deepEqual([bad.startTimeoutMs, bad.callMaxTotalMs, bad.warnings.length], [DEFAULT_START_TIMEOUT_MS, DEFAULT_CALL_MAX_TOTAL_MS, 1]);
  assert.match(bad.warnings[0]!.message, /^TROUPE_MCP_START_TIMEOUT_MS /);
  assert.equal(limits({ TROUPE_MCP_START_TIMEOUT_MS: '99999999999' }).startTimeoutMs, MAX_TIMER_MS);
});
