// The Mermaid export of the real machine definitions: every state and every transition is drawn,
// nesting and parallel regions come out as Mermaid composites, labels survive Mermaid's syntax,
// and the active states (with their ancestors) are highlighted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toMermaid } from '../../../src/machines/mermaid.js';
import { describeMachine, type MachineDescription, type StateDescription } from '../../../src/machines/serialize.js';
import { sessionMachine } from '../../../src/machines/session.machine.js';
import { turnMachine } from '../../../src/machines/turn.machine.js';
import { childMachine } from '../../../src/machines/child.machine.js';

const MACHINES = { session: describeMachine(sessionMachine), turn: describeMachine(turnMachine), child: describeMachine(childMachine) };

const flat = (s: StateDescription): StateDescription[] => [s, ...s.states.flatMap(flat)];

/** Parses the subset of stateDiagram-v2 toMermaid writes, failing on anything else. */
function parse(text: string) {
  const lines = text.trimEnd().split('\n');
  assert.equal(lines[0], 'stateDiagram-v2');
  const states = new Map<string, string>();
  const edges: { from: string; to: string; label: string }[] = [];
  const stack: string[] = [];
  const parents = new Map<string, string | undefined>();
  let active: string[] = [];
  for (const line of lines.slice(1).map((l) => l.trim())) {
    let m;
    if (line.startsWith('%%') || line === '--' || line.startsWith('classDef ')) continue;
    if ((m = /^state "([^"]+)" as (\w+)( \{)?$/.exec(line))) {
      assert.ok(!states.has(m[2]!), `state id ${m[2]} declared twice`);
      states.set(m[2]!, m[1]!);
      parents.set(m[2]!, stack.at(-1));
      if (m[3]) stack.push(m[2]!);
    } else if (line === '}') {
      assert.ok(stack.pop(), 'unbalanced }');
    } else if ((m = /^(\[\*\]|\w+) --> (\[\*\]|\w+)(?: : (.+))?$/.exec(line))) {
      edges.push({ from: m[1]!, to: m[2]!, label: m[3] ?? '' });
    } else if ((m = /^class ([\w,]+) active$/.exec(line))) {
      active = m[1]!.split(',');
    } else {
      assert.fail(`unexpected line: ${line}`);
    }
  }
  assert.equal(stack.length, 0, 'every composite state is closed');
  return { states, edges, parents, active };
}

const decode = (s: string) => s.replace(/#(58|59|35|quot);/g, (_, c: string) => ({ '58': ':', '59': ';', '35': '#', quot: '"' })[c]!);

for (const [name, machine] of Object.entries(MACHINES) as [string, MachineDescription][]) {
  test(`${name}: every state and every transition is in the diagram`, () => {
    const d = parse(toMermaid(machine));
    const id = (p: string) => (p === '' ? machine.id : p.replace(/\./g, '_'));
    for (const s of flat(machine.root).slice(1)) {
      assert.equal(d.states.get(id(s.path)), s.key, `state ${s.path}`);
      const parentPath = s.path.includes('.') ? s.path.slice(0, s.path.lastIndexOf('.')) : undefined;
      assert.equal(d.parents.get(id(s.path)), parentPath === undefined ? undefined : id(parentPath), `${s.path} nested in its parent`);
    }
    let expected = 0;
    for (const s of flat(machine.root)) {
      for (const t of s.transitions) {
        for (const target of t.targets) {
          expected++;
          const from = s.path === '' ? `${machine.id}_any` : id(s.path);
          const want = t.event + (t.guard ? ` [${t.guard}]` : '');
          assert.ok(
            d.edges.some((e) => e.from === from && e.to === id(target) && decode(e.label) === want),
            `edge ${from} → ${target} on ${want}`,
          );
        }
      }
    }
    assert.equal(d.edges.filter((e) => e.label !== '').length, expected, 'no invented transitions');
    for (const e of d.edges) assert.ok(!/[:;"]/.test(e.label.replace(/#(58|59|35|quot);/g, '')), `label escaped: ${e.label}`);
  });
}

test('the turn machine: nested tools states, initial arrows, final state, the event labels of invoked effects', () => {
  const text = toMermaid(MACHINES.turn);
  const d = parse(text);
  assert.ok(d.edges.some((e) => e.from === '[*]' && e.to === 'preflight'));
  assert.ok(d.edges.some((e) => e.from === '[*]' && e.to === 'tools_deciding'), 'the nested initial state');
  assert.ok(d.edges.some((e) => e.from === 'done' && e.to === '[*]'), 'done is final');
  assert.ok(d.edges.some((e) => e.from === 'modelStep' && e.to === 'tools' && decode(e.label) === 'done: modelStep [hasToolCalls]'));
});

test('active states and their ancestors are highlighted; unknown states are ignored', () => {
  assert.deepEqual(parse(toMermaid(MACHINES.turn, ['tools.awaitingPermission'])).active.sort(), ['tools', 'tools_awaitingPermission']);
  assert.deepEqual(parse(toMermaid(MACHINES.session, ['running'])).active, ['running']);
  assert.deepEqual(parse(toMermaid(MACHINES.session, ['nowhere'])).active, []);
  assert.ok(!toMermaid(MACHINES.session).includes('classDef'), 'nothing highlighted without active states');
});

test('parallel regions are separated with --', () => {
  const machine: MachineDescription = {
    id: 'p',
    root: {
      path: '', key: 'p', type: 'parallel', invokes: [], transitions: [],
      states: ['a', 'b'].map((r) => ({
        path: r, key: r, type: 'compound' as const, initial: `${r}.x`, invokes: [], transitions: [],
        states: [{ path: `${r}.x`, key: 'x', type: 'atomic' as const, invokes: [], transitions: [{ event: 'GO', targets: [`${r}.y`] }], states: [] },
                 { path: `${r}.y`, key: 'y', type: 'atomic' as const, invokes: [], transitions: [], states: [] }],
      })),
    },
  };
  const text = toMermaid(machine, ['a.y|b.x']);
  const lines = text.split('\n').map((l) => l.trim());
  const sep = lines.indexOf('--');
  assert.ok(sep > lines.indexOf('state "a" as a {') && sep < lines.indexOf('state "b" as b {'), 'the regions are split');
  assert.ok(!lines.includes('[*] --> a'), 'a parallel state has no single initial');
  assert.deepEqual(parse(text).active.sort(), ['a', 'a_y', 'b', 'b_x']);
});
