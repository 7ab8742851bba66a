// The page's statechart layout, run on the installed elkjs (as the page does, through the global
// ELK) with the real machine definitions and a parallel one: every state is placed, children lie
// inside their parent's box, siblings do not overlap, parallel regions sit side by side, and every
// transition is routed between its states.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { layoutMachine, ANY, type Placed, type PlacedState } from '../../../src/inspector-ui/layout.js';
import { describeMachine, type MachineDescription, type StateDescription } from '../../../src/machines/serialize.js';
import { sessionMachine } from '../../../src/machines/session.machine.js';
import { turnMachine } from '../../../src/machines/turn.machine.js';
import { childMachine } from '../../../src/machines/child.machine.js';

(globalThis as { ELK?: unknown }).ELK = createRequire(import.meta.url)('elkjs/lib/elk.bundled.js');

const flat = (s: StateDescription): StateDescription[] => [s, ...s.states.flatMap(flat)];
const inside = (c: PlacedState, p: PlacedState) => c.x >= p.x && c.y >= p.y && c.x + c.width <= p.x + p.width && c.y + c.height <= p.y + p.height;
const overlap = (a: PlacedState, b: PlacedState) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

function checkLayout(machine: MachineDescription, placed: Placed) {
  const byPath = new Map(placed.states.map((s) => [s.path, s]));
  const states = flat(machine.root).slice(1);
  for (const s of states) {
    const p = byPath.get(s.path);
    assert.ok(p && p.width > 0 && p.height > 0, `${s.path} is placed`);
    assert.ok(p.x >= 0 && p.y >= 0 && p.x + p.width <= placed.width && p.y + p.height <= placed.height, `${s.path} is in the picture`);
    assert.equal(p.compound, s.states.length > 0);
    for (const child of s.states) assert.ok(inside(byPath.get(child.path)!, p), `${child.path} inside ${s.path}`);
  }
  for (const parent of [machine.root, ...states]) {
    const siblings = parent.states.map((c) => byPath.get(c.path)!);
    for (let i = 0; i < siblings.length; i++) for (let j = i + 1; j < siblings.length; j++) assert.ok(!overlap(siblings[i]!, siblings[j]!), `${siblings[i]!.path} and ${siblings[j]!.path} do not overlap`);
  }
  const targeted = states.concat(machine.root).flatMap((s) => s.transitions.flatMap((t) => t.targets.map((to) => ({ from: s.path === '' ? ANY : s.path, to, event: t.event }))));
  assert.equal(placed.edges.length, targeted.length, 'one edge per targeted transition');
  for (const t of targeted) {
    const e = placed.edges.find((x) => x.from === t.from && x.to === t.to && x.event === t.event);
    assert.ok(e && e.points.length >= 2, `edge ${t.from} → ${t.to} on ${t.event} is routed`);
  }
}

for (const [name, machine] of Object.entries({ session: sessionMachine, turn: turnMachine, child: childMachine })) {
  test(`${name} machine: laid out with nesting respected`, async () => {
    const description = describeMachine(machine);
    checkLayout(description, await layoutMachine(description));
  });
}

test('parallel regions are laid out side by side, each inside the parallel state', async () => {
  const region = (r: string): StateDescription => ({
    path: `p.${r}`, key: r, type: 'compound', initial: `p.${r}.x`, invokes: [], transitions: [],
    states: [
      { path: `p.${r}.x`, key: 'x', type: 'atomic', invokes: [], transitions: [{ event: 'GO', targets: [`p.${r}.y`] }], states: [] },
      { path: `p.${r}.y`, key: 'y', type: 'atomic', invokes: [], transitions: [], states: [] },
    ],
  });
  const machine: MachineDescription = {
    id: 'm',
    root: {
      path: '', key: 'm', type: 'compound', initial: 'p', invokes: [], transitions: [],
      states: [
        { path: 'p', key: 'p', type: 'parallel', invokes: [], transitions: [{ event: 'DONE', targets: ['end'] }], states: [region('a'), region('b')] },
        { path: 'end', key: 'end', type: 'final', invokes: [], transitions: [], states: [] },
      ],
    },
  };
  const placed = await layoutMachine(machine);
  checkLayout(machine, placed);
  const a = placed.states.find((s) => s.path === 'p.a')!;
  const b = placed.states.find((s) => s.path === 'p.b')!;
  assert.ok(a.x + a.width <= b.x || b.x + b.width <= a.x, 'the regions are next to each other, not stacked');
  assert.equal(placed.states.find((s) => s.path === 'p')!.type, 'parallel');
});
