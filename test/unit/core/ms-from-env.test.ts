// The milliseconds an operator gives through the environment (msFromEnv, src/core/option-values.ts),
// one rule for every variable that holds some: unset or blank is the default; decimal digits (spaces
// around them allowed) from the least to the greatest taken are that number; over it, what the
// variable's `over` says (else bad); anything else is the default, after `bad` is told.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_TIMER_MS, msFromEnv, type MsRule } from '../../../src/core/option-values.js';

/** What `raw` reads as by `rule`, and what `bad` and `over` were told. */
function read(raw: string | undefined, rule: Omit<MsRule, 'bad' | 'over'>, withOver = true) {
  const told: string[] = [];
  const ms = msFromEnv({ X_MS: raw }, 'X_MS', {
    ...rule,
    bad: (value) => void told.push(`bad ${value}`),
    ...(withOver ? { over: (value: string) => (told.push(`over ${value}`), -1) } : {}),
  });
  return { ms, told };
}

const timer = { otherwise: 700, min: 1, max: MAX_TIMER_MS };

test('unset, empty or blank is the default, and nothing is told', () => {
  for (const raw of [undefined, '', '   ', '\t']) assert.deepEqual(read(raw, timer), { ms: 700, told: [] }, JSON.stringify(raw));
  assert.deepEqual(msFromEnv({}, 'X_MS', timer), 700);
});

test('decimal digits from min to max are that number, spaces around them allowed', () => {
  for (const [raw, ms] of [['1', 1], ['5000', 5000], [' 90000 ', 90_000], ['007', 7], [String(MAX_TIMER_MS), MAX_TIMER_MS]] as const) {
    assert.deepEqual(read(raw, timer), { ms, told: [] }, raw);
  }
  assert.deepEqual(read('0', { ...timer, min: 0 }), { ms: 0, told: [] }, 'a min of 0 takes 0');
});

test('anything else is the default, after bad is told the value as it was', () => {
  for (const raw of ['0', '-5', '-0', '1.5', 'abc', '1e6', 'Infinity', 'NaN', '0x10', '10ms', '1_000', '+5', '5 0']) {
    assert.deepEqual(read(raw, timer), { ms: 700, told: [`bad ${raw}`] }, raw);
  }
});

test('over max is what over says; with no over, it is bad', () => {
  for (const raw of [String(MAX_TIMER_MS + 1), '9999999999', '9'.repeat(400)]) {
    assert.deepEqual(read(raw, timer), { ms: -1, told: [`over ${raw}`] }, raw);
    assert.deepEqual(read(raw, timer, false), { ms: 700, told: [`bad ${raw}`] }, raw);
  }
  // With neither told, a bad value is the default without a word.
  assert.equal(msFromEnv({ X_MS: 'soon' }, 'X_MS', timer), 700);
});
