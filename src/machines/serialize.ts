/**
 * Serializes a machine's definition into plain JSON: states (nested), their kinds, what they
 * invoke, and every transition with its event, guard and targets. The inspector draws machines
 * from this, and `troupe inspect --mermaid` prints it; neither needs XState to read it.
 */
import type { AnyStateMachine } from 'xstate';

export interface TransitionDescription {
  /** A user event (`CANCEL`), `done: <effect>` / `error: <effect>` for invoked effects, or `always`. */
  event: string;
  targets: string[];
  guard?: string;
}

export interface StateDescription {
  /** Dotted path from the root, e.g. `tools.awaitingPermission` ('' for the root). */
  path: string;
  key: string;
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  initial?: string;
  invokes: string[];
  transitions: TransitionDescription[];
  states: StateDescription[];
}

export interface MachineDescription {
  id: string;
  root: StateDescription;
}

interface NodeLike {
  id: string;
  key: string;
  type: StateDescription['type'];
  states: Record<string, NodeLike>;
  initial?: { target: NodeLike[] };
  invoke: { src: unknown; id: string }[];
  transitions: Map<string, TransitionLike[]>;
  always?: TransitionLike[];
}
interface TransitionLike {
  eventType: string;
  target?: NodeLike[];
  guard?: unknown;
}

/** `turn.tools.running` → `tools.running`. */
function pathOf(node: NodeLike, machineId: string): string {
  return node.id === machineId ? '' : node.id.slice(machineId.length + 1);
}

function eventName(eventType: string, invokes: NodeLike['invoke']): string {
  const m = /^xstate\.(done|error)\.actor\.(.+)$/.exec(eventType);
  if (!m) return eventType;
  const invoked = invokes.find((i) => i.id === m[2]);
  return `${m[1]}: ${invoked && typeof invoked.src === 'string' ? invoked.src : m[2]}`;
}

function guardName(guard: unknown): string | undefined {
  if (guard === undefined) return undefined;
  if (typeof guard === 'string') return guard;
  if (guard && typeof guard === 'object' && 'type' in guard) return String((guard as { type: unknown }).type);
  return 'condition';
}

function describeNode(node: NodeLike, machineId: string): StateDescription {
  const describe = (t: TransitionLike, event: string): TransitionDescription => {
    const guard = guardName(t.guard);
    return { event, targets: (t.target ?? []).map((n) => pathOf(n, machineId)), ...(guard ? { guard } : {}) };
  };
  const transitions: TransitionDescription[] = [];
  for (const [eventType, list] of node.transitions) for (const t of list) transitions.push(describe(t, eventName(eventType, node.invoke)));
  for (const t of node.always ?? []) transitions.push(describe(t, 'always'));
  const initial = node.initial?.target[0];
  return {
    path: pathOf(node, machineId),
    key: node.key,
    type: node.type,
    ...(initial ? { initial: pathOf(initial, machineId) } : {}),
    invokes: node.invoke.map((i) => (typeof i.src === 'string' ? i.src : i.id)),
    transitions,
    states: Object.values(node.states).map((child) => describeNode(child, machineId)),
  };
}

export function describeMachine(machine: AnyStateMachine): MachineDescription {
  return { id: machine.id, root: describeNode(machine.root as unknown as NodeLike, machine.id) };
}

/** `{ tools: 'running' }` → `tools.running`; parallel regions are joined with `|`. */
export function statePath(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => (v === undefined || (typeof v === 'object' && v && Object.keys(v).length === 0) ? k : `${k}.${statePath(v)}`))
      .join('|');
  }
  return String(value);
}

/**
 * An XState event type as the machine description labels it: `xstate.done.actor.0.turn.tools.deciding`
 * → `done: decideTool` (the effect invoked in that state), `xstate.init` → `init`.
 */
export function eventLabel(type: string, machine: MachineDescription): string {
  if (type === 'xstate.init') return 'init';
  const m = /^xstate\.(done|error)\.actor\.(.+)$/.exec(type);
  if (!m) return type;
  const id = m[2]!;
  const prefix = `${machine.id}.`;
  const at = id.indexOf(prefix);
  if (at >= 0) {
    const path = id.slice(at + prefix.length);
    const find = (s: StateDescription): StateDescription | undefined => (s.path === path ? s : s.states.map(find).find(Boolean));
    const state = find(machine.root);
    if (state?.invokes[0]) return `${m[1]}: ${state.invokes[0]}`;
  }
  return `${m[1]}: ${id.split('.').pop()}`;
}
