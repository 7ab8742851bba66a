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

test('current states are of machines that exist: a session machine that starts has no turn, and none runs while no process does', () => {
  const hub = new MachineHub();
  const at = (machine: Transition['machine'], state: string, event: string) => hub.record('ses_a', { machine, state, event, at: 1 });
  at('session', 'idle', 'init');
  at('child', 'busy', 'BUSY');
  at('session', 'running', 'PROMPT');
  at('turn', 'tools.running', 'done: decideTool');
  assert.deepEqual(hub.states('ses_a'), { session: 'running', turn: 'tools.running', child: 'busy' });
  // kill -9: the process and its machines are gone; a new one opens the session again.
  at('child', 'backoff', 'EXITED');
  assert.deepEqual(hub.states('ses_a'), { child: 'backoff' });
  at('child', 'restarting', 'xstate.after.backoff.child.backoff');
  at('child', 'initializing', 'SPAWNED');
  at('session', 'idle', 'init');
  at('child', 'ready', 'READY');
  assert.deepEqual(hub.states('ses_a'), { session: 'idle', child: 'ready' });
  // The history keeps what happened, the dead process's states among it.
  assert.deepEqual(hub.transitions('ses_a').filter((x) => x.machine === 'turn').map((x) => x.state), ['tools.running']);
  // A session machine started again in the same process (reopened there) has no turn either.
  at('session', 'running', 'PROMPT');
  at('turn', 'done', 'done: modelStep');
  at('session', 'idle', 'init');
  assert.deepEqual(hub.states('ses_a'), { session: 'idle', child: 'ready' });
  for (const state of ['idleStopped', 'failed', 'exited']) {
    at('session', 'idle', 'init');
    at('child', state, 'EXITED');
    assert.deepEqual(hub.states('ses_a'), { child: state }, state);
  }
});
