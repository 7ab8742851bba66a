import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MachineHub, type Transition } from '../../../src/daemon/machine-hub.js';

const t = (state: string, at: number): Transition => ({ machine: 'child', state, event: 'E', at });

test('history is bounded per session and across sessions; current states are kept for every session', () => {
  const hub = new MachineHub({ perSession: 3, sessions: 2 });
  const seen: string[] = [];
  hub.listen((id, x) => seen.push(`${id}:${x.state}`));
  for (let i = 1; i <= 5; i++) hub.record('ses_a', t(`s${i}`, i));
  assert.deepEqual(hub.transitions('ses_a').map((x) => x.state), ['s3', 's4', 's5'], 'the last 3 of ses_a');
  hub.record('ses_b', t('ready', 6));
  hub.record('ses_a', t('busy', 7)); // ses_a is now the most recently active
  hub.record('ses_c', t('ready', 8)); // a third session: the least recently active history goes
  assert.deepEqual(hub.transitions('ses_b'), [], 'ses_b history evicted');
  assert.deepEqual(hub.transitions('ses_a').map((x) => x.state), ['s4', 's5', 'busy']);
  assert.deepEqual(hub.states('ses_b'), { child: 'ready' }, 'the current state of an evicted history is still known');
  assert.equal(seen.length, 8, 'listeners see every transition');
});

test('every transition is numbered daemon-wide, in the order recorded, across sessions', () => {
  const hub = new MachineHub();
  const heard: number[] = [];
  hub.listen((_, x) => heard.push(x.n));
  // Two transitions alike in every field but their number: the inspector tells them apart by it.
  hub.record('ses_a', t('busy', 5));
  hub.record('ses_b', t('busy', 5));
  hub.record('ses_a', t('busy', 5));
  assert.deepEqual(hub.transitions('ses_a').map((x) => x.n), [1, 3]);
  assert.deepEqual(hub.transitions('ses_b').map((x) => x.n), [2]);
  assert.deepEqual(heard, [1, 2, 3]);
  assert.equal(hub.lastN, 3);
});

test('a deleted session is forgotten: its states and history go, the others stay', () => {
  const hub = new MachineHub();
  hub.record('ses_a', t('ready', 1));
  hub.record('ses_b', t('busy', 2));
  hub.forget('ses_a');
  assert.deepEqual(hub.states('ses_a'), {});
  assert.deepEqual(hub.transitions('ses_a'), []);
  assert.deepEqual(hub.states('ses_b'), { child: 'busy' });
  assert.equal(hub.transitions('ses_b').length, 1);
});
