/**
 * Draws one laid-out machine as SVG, highlights its active states, and animates a transition:
 * the edge that fired flashes and its event name floats up from the state entered.
 */
import { shownEvent } from './event-label.js';
import { ANY, type Placed, type PlacedEdge } from './layout.js';

const NS = 'http://www.w3.org/2000/svg';
/** The smallest scale a chart is drawn at in a narrow window: its 12-unit state names at 9 px. */
const MIN_SCALE = 0.75;

function el<K extends keyof SVGElementTagNameMap>(name: K, attrs: Record<string, string | number>, parent?: Element): SVGElementTagNameMap[K] {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  parent?.appendChild(e);
  return e;
}

/** `tools.running` → ['tools', 'tools.running']; parallel regions (`a|b`) each add theirs. */
export function activePaths(state: string | undefined): Set<string> {
  const out = new Set<string>();
  if (!state) return out;
  for (const region of state.split('|')) {
    const parts = region.split('.');
    for (let i = 1; i <= parts.length; i++) out.add(parts.slice(0, i).join('.'));
  }
  return out;
}

export class Statechart {
  private readonly svg: SVGSVGElement;
  private readonly nodes = new Map<string, SVGGElement>();
  private readonly edges: { edge: PlacedEdge; g: SVGGElement }[] = [];
  private active = new Set<string>();

  constructor(host: HTMLElement, private readonly placed: Placed, machine: string) {
    host.textContent = '';
    // Scaled to the panel's width, so that the whole machine is in view; in a narrow window, not
    // below MIN_SCALE (the panel scrolls instead: page.ts). A CSSOM property, which the page's
    // Content-Security-Policy allows (a style attribute it would not).
    this.svg = el('svg', { viewBox: `0 0 ${placed.width} ${placed.height}`, preserveAspectRatio: 'xMidYMin meet', 'data-machine': machine });
    this.svg.style.setProperty('--min-width', `${Math.round(placed.width * MIN_SCALE)}px`);
    const defs = el('defs', {}, this.svg);
    const marker = el('marker', { id: `arrow`, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 8, markerHeight: 8, markerUnits: 'userSpaceOnUse', orient: 'auto-start-reverse' }, defs);
    el('path', { d: 'M 0 0 L 10 5 L 0 10 z', fill: '#9e9eaa' }, marker);
    const states = [...placed.states].sort((a, b) => a.path.split('.').length - b.path.split('.').length);
    for (const s of states) {
      const kinds = ['node', s.compound ? 'compound' : '', s.type, s.initial ? 'initial' : '', s.path === ANY ? 'any' : ''].filter(Boolean).join(' ');
      const g = el('g', { class: kinds, 'data-state': s.path }, this.svg);
      el('rect', { x: s.x, y: s.y, width: s.width, height: s.height, rx: 7 }, g);
      const t = el('text', { x: s.compound ? s.x + 8 : s.x + s.width / 2, y: s.compound ? s.y + 15 : s.y + s.height / 2 + 4, 'text-anchor': s.compound ? 'start' : 'middle' }, g);
      t.textContent = (s.initial ? '▸ ' : '') + s.key;
      this.nodes.set(s.path, g);
    }
    for (const e of placed.edges) {
      const g = el('g', { class: 'edge', 'data-from': e.from, 'data-to': e.to, 'data-event': e.event }, this.svg);
      if (e.points.length > 1) el('path', { d: e.points.map((p, i) => `${i ? 'L' : 'M'} ${p.x} ${p.y}`).join(' ') }, g);
      if (e.labelAt) {
        const t = el('text', { x: e.labelAt.x, y: e.labelAt.y }, g);
        t.textContent = e.label;
      }
      this.edges.push({ edge: e, g });
    }
    host.appendChild(this.svg);
  }

  /** Highlights `state` and its ancestors; nothing when undefined. */
  setActive(state: string | undefined): void {
    this.active = activePaths(state);
    for (const [path, g] of this.nodes) g.classList.toggle('active', this.active.has(path));
  }

  /** Unlights the last transition (time travel shows one transition at a time). */
  clearFire(): void {
    for (const { g } of this.edges) g.classList.remove('fire');
  }

  /** Animates the transition into `state` on `event` from the states active before. */
  fire(previous: string | undefined, state: string, event: string): void {
    const from = activePaths(previous);
    const to = activePaths(state);
    from.add(ANY);
    for (const { edge, g } of this.edges) {
      // Only the latest transition stays lit.
      if (!(edge.event === event && from.has(edge.from) && to.has(edge.to))) {
        g.classList.remove('fire');
        continue;
      }
      // Its animation starts over: a new animation-name (`again` switches between two alike) restarts
      // it at the next frame. Until 2026-12-07 the edge was unlit, its box read and lit again: a
      // style and layout of the whole page forced for each transition, 30–110 ms with a long session
      // listed (the timeline's 1,000 rows, the strip's marks), and a burst of them (the feed resuming,
      // a busy session) froze the page for seconds (docs/inspector.md).
      if (g.classList.contains('fire')) g.classList.toggle('again');
      g.classList.add('fire');
    }
    const target = [...to].pop();
    const node = target ? this.placed.states.find((s) => s.path === target) : undefined;
    if (node) {
      const toast = el('text', { class: 'toast', x: node.x + node.width + 4, y: node.y + 12, 'data-toast': event }, this.svg);
      toast.textContent = shownEvent(event);
      window.setTimeout(() => toast.remove(), 1900);
    }
  }
}
