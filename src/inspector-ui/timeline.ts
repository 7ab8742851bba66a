/**
 * The timeline: a session's log events and its machines' transitions merged on one time axis.
 * Session and turn transitions are the ones rebuilt from the log (each with its causing event);
 * the supervised child's come from the daemon's live feed (crashes and restarts are daemon-side).
 * Folding the rows up to any one of them gives the machines' states at that moment.
 */
import type { LiveTransition, LogEvent, ReplayedTransition, States } from './types.js';
import { shownEvent } from './event-label.js';
import { visible } from './visible-text.js';

export interface Row {
  key: string;
  at: number;
  /** The log seq of the event (or of the transition's cause). */
  seq?: number;
  lane: 'log' | 'session' | 'turn' | 'child' | 'gap';
  kind: string;
  type: string;
  text: string;
  /** For transitions: the machine and its new state, and what caused it. */
  transition?: { machine: 'session' | 'turn' | 'child'; state: string; event: string };
  cause?: unknown;
}

/**
 * At most `n` UTF-16 units, the last an ellipsis when cut; never between the two halves of a
 * surrogate pair (an emoji), which would leave a lone one, shown as U+FFFD. The same rule as
 * clip() in src/tools/tool.ts, which the page may not import (it takes only types from troupe).
 */
const clip = (s: string, n = 60) => {
  if (s.length <= n) return s;
  const low = s.charCodeAt(n - 1) >= 0xdc00 && s.charCodeAt(n - 1) <= 0xdfff;
  const high = s.charCodeAt(n - 2) >= 0xd800 && s.charCodeAt(n - 2) <= 0xdbff;
  return `${s.slice(0, low && high ? n - 2 : n - 1)}…`;
};
const textOf = (content: unknown) =>
  Array.isArray(content) ? content.map((b) => (b && typeof b === 'object' && 'text' in b ? String((b as { text: unknown }).text) : '')).join(' ') : '';

/**
 * A turn ended by crash repair is drawn as a crash: marked `interrupted` (src/core/interruption.ts,
 * which the page may not import: the same test), or from an older log, `agent_crashed`. Until
 * 2026-12-07 a turn a stop's repair ended (`log_write_failed`, `internal_error`) was drawn as any turn.
 */
function kindOf(e: LogEvent): string {
  if (e.type === 'turn_completed') return e.interrupted === true || e.errorCode === 'agent_crashed' ? 'crash' : e.stopReason === 'cancelled' ? 'cancel' : 'turn';
  if (e.type === 'user_message' || e.type === 'turn_started') return 'turn';
  if (e.type.startsWith('tool_call')) return 'tool';
  if (e.type.startsWith('permission')) return 'permission';
  if (e.type.startsWith('steer')) return 'steer';
  if (e.type.startsWith('compaction')) return 'compaction';
  return 'other';
}

function describe(e: LogEvent): string {
  switch (e.type) {
    case 'user_message':
      return `prompt "${clip(textOf(e.content))}"${e.parts ? ` (content in ${String(e.parts)} parts)` : ''}`;
    case 'turn_started':
      return `turn started ${e.turnId}`;
    case 'turn_completed':
      return `turn completed: ${String(e.stopReason)}${e.errorCode ? ` (${String(e.errorCode)})` : ''}, ${String(e.steps)} step(s)`;
    case 'tool_call_started':
      return `tool call ${String(e.name)}: ${clip(String(e.title))}`;
    case 'tool_call_updated':
      return `tool call ${String(e.toolCallId)} ${String(e.status ?? 'updated')}${e.errorCode ? ` (${String(e.errorCode)})` : ''}`;
    case 'permission_requested':
      return `permission asked for ${String(e.toolCallId)}`;
    case 'permission_resolved':
      return `permission ${String(e.outcome)} by ${String(e.decidedBy)}`;
    case 'steer_received':
      return `steer received "${clip(textOf(e.content))}"${e.parts ? ` (content in ${String(e.parts)} parts)` : ''}`;
    case 'steer_applied':
      return `steer applied at step ${String(e.step)}`;
    case 'steer_rejected':
      return `steer rejected: ${String(e.code)}`;
    case 'compaction_started':
      return `compaction started (${String(e.reason)})`;
    case 'compaction_completed':
      return `compaction ${String(e.status)}`;
    case 'model_retry':
      return `model call retried: ${String(e.errorCode)}${e.status !== undefined ? ` (${String(e.status)})` : ''} from ${String(e.provider)}, attempt ${String(e.attempt)} of ${String(e.attempts)} after ${String(e.delayMs)} ms`;
    case 'session_created':
      return `session created in ${String(e.cwd)} with ${String(e.model)}`;
    default:
      return e.type.replace(/_/g, ' ');
  }
}

/** Builds the rows, in time order. Streamed chunks of one message become one row. */
export function buildRows(events: LogEvent[], replayed: ReplayedTransition[], child: LiveTransition[], gaps: { at: number; text: string }[]): Row[] {
  const rows: (Row & { order: number })[] = [];
  let order = 0;
  let chunkRow: (Row & { order: number; n: number }) | undefined;
  for (const e of events) {
    if (e.type === 'agent_message_chunk' || e.type === 'agent_thought_chunk') {
      if (chunkRow && chunkRow.type === e.type && chunkRow.cause && (chunkRow.cause as LogEvent).messageId === e.messageId) {
        chunkRow.n++;
        chunkRow.text = `${e.type === 'agent_message_chunk' ? 'agent message' : 'thought'} (${chunkRow.n} chunks)`;
        continue;
      }
      chunkRow = { key: `e${e.seq}`, at: e.ts, seq: e.seq, lane: 'log', kind: 'other', type: e.type, text: `${e.type === 'agent_message_chunk' ? 'agent message' : 'thought'}: "${clip(String(e.text))}"`, cause: e, order: order++, n: 1 };
      rows.push(chunkRow);
      continue;
    }
    chunkRow = undefined;
    rows.push({ key: `e${e.seq}`, at: e.ts, seq: e.seq, lane: 'log', kind: kindOf(e), type: e.type, text: describe(e), cause: e, order: order++ });
  }
  for (const [i, t] of replayed.entries()) {
    rows.push({
      key: `r${i}`, at: t.at, seq: t.seq, lane: t.machine, kind: 'transition', type: 'transition',
      text: `${t.machine} → ${t.state}   on ${t.event}`,
      transition: { machine: t.machine, state: t.state, event: t.event },
      cause: { transition: { machine: t.machine, state: t.state, event: t.event }, causedBy: t.cause },
      order: order++,
    });
  }
  for (const [i, t] of child.entries()) {
    // `crashed` is transient (it decides between backoff and failed), so a crash shows as the
    // step into backoff or failed.
    const kind = t.state === 'crashed' || t.state === 'failed' || t.state === 'backoff' ? 'crash' : t.state === 'restarting' ? 'restart' : 'transition';
    rows.push({
      key: `c${i}`, at: t.at, lane: 'child', kind, type: 'transition', text: `child → ${t.state}   on ${shownEvent(t.event)}`,
      transition: { machine: 'child', state: t.state, event: t.event }, cause: { transition: t, causedBy: 'the daemon (supervisor)' }, order: order++,
    });
  }
  for (const [i, g] of gaps.entries()) rows.push({ key: `g${i}`, at: g.at, lane: 'gap', kind: 'gap', type: 'gap', text: g.text, order: order++ });
  // Time first; within one millisecond the log's order, a transition after its cause.
  rows.sort((a, b) => a.at - b.at || (a.seq ?? Infinity) - (b.seq ?? Infinity) || a.order - b.order);
  return rows;
}

/** The turn the turn chart is about: the latest one started up to `seq` (the present if none). */
export function turnAt(events: LogEvent[], seq = Infinity): string | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.seq <= seq && e.type === 'turn_started') return e.turnId;
  }
  return undefined;
}

/** The machines' states once every row up to `index` (inclusive) has happened. */
export function statesThrough(rows: Row[], index: number): States {
  const states: States = {};
  for (const r of rows.slice(0, index + 1)) {
    if (!r.transition) continue;
    states[r.transition.machine] = r.transition.state;
    if (r.transition.machine === 'session' && r.transition.event === 'init') delete states.turn;
  }
  return states;
}

/**
 * The states the log's rows rebuild by the end of `rows`: the session's and turn's (the child's
 * rows are the live feed's, not the log's). Worked out once for each list of rows: the list is built
 * anew at each redraw of the timeline, and these states are asked for at each live transition in
 * between (main.ts liveStates), which until 2026-12-07 went through every row each time.
 */
export function loggedStates(rows: Row[]): Readonly<States> {
  let states = loggedAtEnd.get(rows);
  if (!states) loggedAtEnd.set(rows, (states = statesThrough(rows.filter((r) => r.lane !== 'child'), rows.length)));
  return states;
}
const loggedAtEnd = new WeakMap<Row[], States>();

const LANES: Row['lane'][] = ['log', 'session', 'turn', 'child'];
const COLORS: Record<string, string> = { turn: '#1565c0', tool: '#2e7d32', permission: '#6a1b9a', steer: '#00838f', compaction: '#8d6e63', crash: '#c62828', restart: '#ef6c00', cancel: '#757575', transition: '#455a64', other: '#b0b0b8', gap: '#c62828' };

/** Which mark a bin shows when several rows fall in it: failures first, routine transitions last. */
const PRIORITY = ['crash', 'gap', 'restart', 'cancel', 'permission', 'steer', 'compaction', 'tool', 'turn', 'transition'];
const rank = (kind: string) => {
  const i = PRIORITY.indexOf(kind);
  return i < 0 ? PRIORITY.length : i;
};

/** Width in pixels of one bin of the strip: a mark is 7 px wide, so finer bins would only overlap. */
export const STRIP_BIN_PX = 3;

/**
 * The same rows as marks on a horizontal time axis, one lane per source, binned to the strip's
 * pixels: a long session (30,000 rows) drew a mark per row, tens of thousands of SVG nodes redrawn
 * as it grew. Each lane has at most one mark per STRIP_BIN_PX columns, showing the bin's most
 * telling row (a crash, a gap or a cancel before tool calls and transitions; the earliest of equals)
 * and saying how many more it holds. A click anywhere in a lane selects the row of the mark under
 * it, or of the nearest mark in that lane.
 */
export function renderStrip(svg: SVGSVGElement, rows: Row[], selected: number | undefined, onSelect: (i: number) => void): void {
  const NS = 'http://www.w3.org/2000/svg';
  svg.textContent = '';
  svg.onclick = null;
  const width = svg.clientWidth || 800;
  if (rows.length === 0) return;
  const t0 = rows[0]!.at;
  const t1 = Math.max(rows.at(-1)!.at, t0 + 1);
  const x = (at: number) => 56 + ((at - t0) / (t1 - t0)) * (width - 66);
  const laneOf = (lane: Row['lane']) => Math.max(0, LANES.indexOf(lane === 'gap' ? 'log' : lane));
  const laneY = (lane: number) => 8 + lane * 14;
  for (const [i, lane] of LANES.entries()) {
    const t = document.createElementNS(NS, 'text');
    t.setAttribute('class', 'lane-label');
    t.setAttribute('x', '4');
    t.setAttribute('y', String(laneY(i) + 4));
    t.textContent = lane;
    svg.appendChild(t);
  }
  // Per lane, bin number → the row it shows and how many rows it holds.
  const bins = LANES.map(() => new Map<number, { row: number; n: number }>());
  rows.forEach((r, i) => {
    if (r.kind === 'other') return;
    const lane = bins[laneOf(r.lane)]!;
    const b = Math.floor(x(r.at) / STRIP_BIN_PX);
    const bin = lane.get(b);
    if (!bin) lane.set(b, { row: i, n: 1 });
    else {
      bin.n++;
      if (rank(r.kind) < rank(rows[bin.row]!.kind)) bin.row = i;
    }
  });
  for (const [l, lane] of bins.entries()) {
    for (const { row, n } of lane.values()) {
      const r = rows[row]!;
      const c = document.createElementNS(NS, 'circle');
      c.setAttribute('class', 'mark');
      c.dataset.row = String(row);
      c.dataset.kind = r.kind;
      c.setAttribute('cx', String(x(r.at)));
      c.setAttribute('cy', String(laneY(l)));
      c.setAttribute('r', r.kind === 'crash' || r.kind === 'restart' ? '5' : '3.5');
      c.setAttribute('fill', COLORS[r.kind] ?? '#888');
      const title = document.createElementNS(NS, 'title');
      title.textContent = visible(n > 1 ? `${r.text} (and ${n - 1} more here)` : r.text);
      c.appendChild(title);
      svg.appendChild(c);
    }
  }
  svg.onclick = (ev) => {
    const mark = (ev.target as Element | null)?.closest?.('circle.mark') as SVGCircleElement | null;
    if (mark?.dataset.row) return onSelect(Number(mark.dataset.row));
    const box = svg.getBoundingClientRect();
    const px = ev.clientX - box.left;
    const lane = bins[Math.max(0, Math.min(LANES.length - 1, Math.round((ev.clientY - box.top - 8) / 14)))]!;
    const at = Math.floor(px / STRIP_BIN_PX);
    let best: { row: number } | undefined = lane.get(at);
    for (let d = 1; !best && d <= width; d++) best = lane.get(at - d) ?? lane.get(at + d);
    if (best) onSelect(best.row);
  };
  if (selected !== undefined && rows[selected]) {
    const l = document.createElementNS(NS, 'line');
    l.setAttribute('class', 'cursor');
    const cx = String(x(rows[selected]!.at));
    l.setAttribute('x1', cx);
    l.setAttribute('x2', cx);
    l.setAttribute('y1', '0');
    l.setAttribute('y2', '64');
    svg.appendChild(l);
  }
}
