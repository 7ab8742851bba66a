/**
 * A serialized machine (serialize.ts) as a Mermaid `stateDiagram-v2`, for `troupe inspect
 * --mermaid` and for pasting into issues and docs. Nested states become composite states, the
 * regions of a parallel state are separated with `--`, and the active states get the `active` class.
 * Reads only the JSON description, so it renders definitions fetched from a daemon just as well.
 */
import type { MachineDescription, StateDescription } from './serialize.js';

/** Mermaid ids may not contain dots: `tools.running` → `tools_running`; the root is the machine id. */
const idOf = (path: string, machineId: string) => (path === '' ? machineId : path.replace(/[^A-Za-z0-9_]/g, '_'));

/** Mermaid ends a label at `;` and treats `:` specially: use its entity codes instead. */
const ENTITIES: Record<string, string> = { '#': '#35;', ':': '#58;', ';': '#59;', '"': '#quot;' };
const label = (text: string) => text.replace(/[#:;"]/g, (c) => ENTITIES[c]!);

function flatten(s: StateDescription, out: StateDescription[] = []): StateDescription[] {
  out.push(s);
  for (const c of s.states) flatten(c, out);
  return out;
}

/**
 * Renders `machine`. `active` lists active state paths (`tools.running`, or parallel regions
 * joined with `|` as statePath() writes them); each one and its ancestors are highlighted.
 */
export function toMermaid(machine: MachineDescription, active: string[] = []): string {
  const id = (path: string) => idOf(path, machine.id);
  const lines = ['stateDiagram-v2', `  %% machine: ${machine.id}`];
  const body = (s: StateDescription, indent: string) => {
    if (s.initial !== undefined && s.type !== 'parallel') lines.push(`${indent}[*] --> ${id(s.initial)}`);
    s.states.forEach((child, i) => {
      if (s.type === 'parallel' && i > 0) lines.push(`${indent}--`);
      if (child.states.length > 0) {
        lines.push(`${indent}state "${label(child.key)}" as ${id(child.path)} {`);
        body(child, indent + '  ');
        lines.push(`${indent}}`);
      } else {
        lines.push(`${indent}state "${label(child.key)}" as ${id(child.path)}`);
      }
      if (child.type === 'final') lines.push(`${indent}${id(child.path)} --> [*]`);
    });
  };
  body(machine.root, '  ');

  // Transitions of the root apply in every state: draw them from one "any state" node.
  const all = flatten(machine.root);
  const anyId = `${machine.id}_any`;
  if (machine.root.transitions.some((t) => t.targets.length > 0)) lines.push(`  state "(any state)" as ${anyId}`);
  for (const s of all) {
    for (const t of s.transitions) {
      for (const target of t.targets) {
        const from = s.path === '' ? anyId : id(s.path);
        lines.push(`  ${from} --> ${id(target)} : ${label(t.event + (t.guard ? ` [${t.guard}]` : ''))}`);
      }
    }
  }

  const lit = new Set<string>();
  for (const value of active) {
    for (const path of value.split('|')) {
      const parts = path.split('.');
      for (let i = 1; i <= parts.length; i++) lit.add(parts.slice(0, i).join('.'));
    }
  }
  const known = new Set(all.map((s) => s.path));
  const shown = [...lit].filter((p) => p !== '' && known.has(p));
  if (shown.length > 0) {
    lines.push('  classDef active fill:#ffd54f,stroke:#e65100,stroke-width:3px,color:#000');
    lines.push(`  class ${shown.map(id).join(',')} active`);
  }
  return lines.join('\n') + '\n';
}
