/**
 * Lays a serialized machine out with ELK (the installed elkjs bundle, loaded by the page as the
 * global `ELK`): nested and parallel states become compound nodes, transitions become routed edges
 * with their event as label. The result is absolute coordinates, ready to draw.
 */
import { shownEvent } from './event-label.js';
import type { MachineDescription, StateDescription } from './types.js';

interface ElkNode {
  id: string;
  x?: number;
  y?: number;
  width?: number;
  height?: number;
  children?: ElkNode[];
  edges?: ElkEdge[];
  labels?: { text: string; width?: number; height?: number; x?: number; y?: number }[];
  layoutOptions?: Record<string, string>;
}
interface ElkEdge {
  id: string;
  sources: string[];
  targets: string[];
  labels?: { text: string; width: number; height: number; x?: number; y?: number }[];
  sections?: { startPoint: { x: number; y: number }; endPoint: { x: number; y: number }; bendPoints?: { x: number; y: number }[] }[];
  container?: string;
}
declare const ELK: new () => { layout(graph: ElkNode): Promise<ElkNode> };

export interface PlacedState {
  path: string;
  key: string;
  type: StateDescription['type'] | 'any';
  initial: boolean;
  compound: boolean;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface PlacedEdge {
  id: string;
  from: string;
  to: string;
  event: string;
  label: string;
  points: { x: number; y: number }[];
  labelAt?: { x: number; y: number };
}

export interface Placed {
  width: number;
  height: number;
  states: PlacedState[];
  edges: PlacedEdge[];
}

/** The pseudo-state that stands for "any state" (transitions declared on the machine's root). */
export const ANY = '(any)';

const CHAR = 6.4;
const nodeId = (path: string) => `s:${path}`;

export async function layoutMachine(machine: MachineDescription): Promise<Placed> {
  const info = new Map<string, PlacedState>();
  const initials = new Set<string>();
  const build = (s: StateDescription): ElkNode => {
    if (s.initial) initials.add(s.initial);
    const compound = s.states.length > 0;
    info.set(nodeId(s.path), { path: s.path, key: s.key, type: s.type, initial: false, compound, x: 0, y: 0, width: 0, height: 0 });
    const node: ElkNode = { id: nodeId(s.path), labels: [{ text: s.key }] };
    if (compound) {
      node.children = s.states.map(build);
      node.layoutOptions = { 'elk.padding': '[top=24,left=10,bottom=10,right=10]', 'elk.direction': s.type === 'parallel' ? 'RIGHT' : 'DOWN' };
    } else {
      node.width = Math.max(56, s.key.length * CHAR + 20);
      node.height = 26;
    }
    return node;
  };
  const top = machine.root.states.map(build);
  for (const p of initials) {
    const i = info.get(nodeId(p));
    if (i) i.initial = true;
  }
  const edges: ElkEdge[] = [];
  const meta = new Map<string, { from: string; to: string; event: string; label: string }>();
  const all: StateDescription[] = [];
  const walk = (s: StateDescription) => (all.push(s), s.states.forEach(walk));
  walk(machine.root);
  if (machine.root.transitions.some((t) => t.targets.length > 0)) {
    top.push({ id: nodeId(ANY), width: 84, height: 26, labels: [{ text: 'any state' }] });
    info.set(nodeId(ANY), { path: ANY, key: 'any state', type: 'any', initial: false, compound: false, x: 0, y: 0, width: 0, height: 0 });
  }
  for (const s of all) {
    for (const t of s.transitions) {
      for (const target of t.targets) {
        const from = s.path === '' ? ANY : s.path;
        const label = shownEvent(t.event) + (t.guard && t.guard !== 'condition' ? ` [${t.guard}]` : '');
        const id = `e${edges.length}`;
        meta.set(id, { from, to: target, event: t.event, label });
        edges.push({ id, sources: [nodeId(from)], targets: [nodeId(target)], labels: [{ text: label, width: label.length * 5.2, height: 11 }] });
      }
    }
  }
  const graph: ElkNode = {
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'DOWN',
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      'elk.layered.spacing.nodeNodeBetweenLayers': '34',
      'elk.spacing.nodeNode': '18',
      'elk.spacing.edgeLabel': '2',
      'elk.edgeRouting': 'POLYLINE',
    },
    children: top,
    edges,
  };
  const out = await new ELK().layout(graph);
  const abs = new Map<string, { x: number; y: number }>();
  abs.set('root', { x: 0, y: 0 });
  const place = (n: ElkNode, ox: number, oy: number) => {
    const x = ox + (n.x ?? 0);
    const y = oy + (n.y ?? 0);
    abs.set(n.id, { x, y });
    const i = info.get(n.id);
    if (i) Object.assign(i, { x, y, width: n.width ?? 0, height: n.height ?? 0 });
    for (const c of n.children ?? []) place(c, x, y);
  };
  for (const c of out.children ?? []) place(c, 0, 0);
  const placedEdges: PlacedEdge[] = [];
  const collect = (n: ElkNode) => {
    for (const e of n.edges ?? []) {
      // ELK gives edge coordinates relative to the edge's container.
      const o = abs.get(e.container ?? n.id) ?? { x: 0, y: 0 };
      const m = meta.get(e.id)!;
      const points = (e.sections ?? []).flatMap((s) => [s.startPoint, ...(s.bendPoints ?? []), s.endPoint]).map((p) => ({ x: p.x + o.x, y: p.y + o.y }));
      const l = e.labels?.[0];
      placedEdges.push({ id: e.id, ...m, points, ...(l && l.x !== undefined ? { labelAt: { x: l.x + o.x, y: (l.y ?? 0) + o.y + 9 } } : {}) });
    }
    for (const c of n.children ?? []) collect(c);
  };
  collect(out);
  return { width: (out.width ?? 200) + 8, height: (out.height ?? 100) + 8, states: [...info.values()].filter((s) => s.path !== ''), edges: placedEdges };
}
