/** The session list: live and stored sessions with state, model, cwd, last activity, restarts, pid. */
import { runsProcess } from './live-states.js';
import type { SessionRow, States } from './types.js';

const ago = (ms: number) => {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  return s < 60 ? `${s}s ago` : s < 3600 ? `${Math.floor(s / 60)}m ago` : s < 86400 ? `${Math.floor(s / 3600)}h ago` : new Date(ms).toLocaleString();
};

function cell(tr: HTMLTableRowElement, text: string, cls = '', title = ''): HTMLTableCellElement {
  const td = document.createElement('td');
  td.textContent = text;
  if (cls) td.className = cls;
  if (title) td.title = title;
  tr.appendChild(td);
  return td;
}

export function renderSessions(
  body: HTMLTableSectionElement,
  sessions: SessionRow[],
  machines: Map<string, States>,
  selected: string | undefined,
  onSelect: (id: string) => void,
): void {
  body.textContent = '';
  for (const s of sessions) {
    const tr = document.createElement('tr');
    tr.dataset.session = s.id;
    if (s.id === selected) tr.classList.add('selected');
    cell(tr, s.title ? `${s.title} (${s.id.slice(0, 12)}…)` : s.id, '', s.id);
    // Live while a process runs it; a session that failed keeps its child's record (its restarts).
    const status = s.child && runsProcess(s.child.state) ? 'live' : s.status === 'active' ? 'stored' : s.status;
    cell(tr, status).innerHTML = `<span class="pill ${status}"></span>`;
    (tr.lastChild!.firstChild as HTMLElement).textContent = status;
    const m = machines.get(s.id) ?? {};
    const state = [m.session, m.turn].filter(Boolean).join(' / ') || '—';
    cell(tr, `${state}${s.child ? ` · child ${s.child.state}` : ''}`).dataset.testid = 'session-state';
    cell(tr, s.model);
    cell(tr, s.cwd, 'cwd', s.cwd);
    cell(tr, ago(s.updatedAt), '', new Date(s.updatedAt).toISOString());
    // Counted by this daemon's supervisor: unknown (—) for a session no child of it has held.
    cell(tr, s.child ? String(s.child.restarts) : '—').dataset.testid = 'session-restarts';
    cell(tr, s.child?.pid ? String(s.child.pid) : '—').dataset.testid = 'session-pid';
    tr.addEventListener('click', () => onSelect(s.id));
    body.appendChild(tr);
  }
}
