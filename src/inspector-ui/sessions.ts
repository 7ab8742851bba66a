/** The session list: live and stored sessions with state, model, cwd, last activity, restarts, pid. */
import { runsProcess } from './live-states.js';
import type { SessionRow, States } from './types.js';
import { visible } from './visible-text.js';

const ago = (ms: number) => {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  return s < 60 ? `${s}s ago` : s < 3600 ? `${Math.floor(s / 60)}m ago` : s < 86400 ? `${Math.floor(s / 3600)}h ago` : new Date(ms).toLocaleString();
};

function cell(tr: HTMLTableRowElement, text: string, cls = '', title = ''): HTMLTableCellElement {
  const td = document.createElement('td');
  td.textContent = visible(text);
  if (cls) td.className = cls;
  if (title) td.title = visible(title);
  tr.appendChild(td);
  return td;
}

/**
 * One session's row. `states` are its machines' current states, the live feed's over the daemon's
 * list: the child's state too, so the row follows a crash or a restart as the feed tells it, not only
 * at the list's next read. Whether a child is shown at all, its restarts and its pid are the daemon's
 * list's (a session the daemon holds no child for has none: `—`).
 */
export function sessionRow(s: SessionRow, states: States, selected: boolean): HTMLTableRowElement {
  const tr = document.createElement('tr');
  tr.dataset.session = s.id;
  tr.tabIndex = -1; // chosen from the keyboard too: one row is in the tab order (pressed.ts)
  if (selected) tr.classList.add('selected');
  cell(tr, s.title ? `${s.title} (${s.id.slice(0, 12)}…)` : s.id, '', s.id);
  const child = s.child ? (states.child ?? s.child.state) : undefined;
  // Live while a process runs it; a session that failed keeps its child's record (its restarts).
  const status = child && runsProcess(child) ? 'live' : child === 'failed' ? 'failed' : s.status === 'active' ? 'stored' : s.status;
  const pill = document.createElement('span');
  pill.className = `pill ${status}`;
  pill.textContent = status;
  cell(tr, '').appendChild(pill);
  const state = [states.session, states.turn].filter(Boolean).join(' / ') || '—';
  cell(tr, `${state}${child ? ` · child ${child}` : ''}`).dataset.testid = 'session-state';
  cell(tr, s.model);
  cell(tr, s.cwd, 'cwd', s.cwd);
  cell(tr, ago(s.updatedAt), '', new Date(s.updatedAt).toISOString());
  // Counted by this daemon's supervisor: unknown (—) for a session no child of it has held.
  cell(tr, s.child ? String(s.child.restarts) : '—').dataset.testid = 'session-restarts';
  cell(tr, s.child?.pid ? String(s.child.pid) : '—').dataset.testid = 'session-pid';
  return tr;
}

/**
 * Writes session `s` into `tr`, a row of the list: the same element, its cells that read otherwise
 * written again. Until 2026-12-07 a new row took its place (as the feed moved it, up to twenty times a
 * second while the session ran, and at each read of the list): the row clicked lost the focus, which
 * the page gave back, forcing a style and layout of the whole page each time, and a screen reader's
 * place in the list was lost.
 */
export function writeSessionRow(tr: HTMLTableRowElement, s: SessionRow, states: States, selected: boolean): void {
  const cells = [...sessionRow(s, states, selected).cells];
  tr.classList.toggle('selected', selected);
  cells.forEach((td, i) => {
    const old = tr.cells[i];
    if (!old) tr.appendChild(td);
    else if (!old.isEqualNode(td)) old.replaceWith(td);
  });
  while (tr.cells.length > cells.length) tr.deleteCell(-1);
}

/** The whole list, in the daemon's order: the rows of sessions already listed written in place (writeSessionRow). */
export function renderSessions(
  body: HTMLTableSectionElement,
  sessions: SessionRow[],
  statesOf: (s: SessionRow) => States,
  selected: string | undefined,
): void {
  const had = new Map([...body.rows].map((tr) => [tr.dataset.session, tr]));
  const rows = sessions.map((s) => {
    const tr = had.get(s.id);
    had.delete(s.id);
    if (!tr) return sessionRow(s, statesOf(s), s.id === selected);
    writeSessionRow(tr, s, statesOf(s), s.id === selected);
    return tr;
  });
  for (const tr of had.values()) tr.remove();
  // Each row in its place: those already there in order are passed over, not moved.
  let at = body.firstElementChild;
  for (const tr of rows) {
    if (tr === at) at = at.nextElementSibling;
    else body.insertBefore(tr, at);
  }
}
