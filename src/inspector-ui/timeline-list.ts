/**
 * The timeline's list: a window of the rows (timeline.ts), redrawn up to four times a second while
 * a session runs. A redraw changes only what changed: the items of rows that left the window go, the
 * new rows' items are added in place, and an item is written again only when its row reads
 * otherwise (a streamed message's chunk count, a rewound log's transition under the same key). Until
 * 2026-12-07 every redraw rebuilt the whole window, a thousand items: with a session of 10,000 events
 * streaming, the page's timers stalled for up to 0.5–0.9 s (docs/inspector.md).
 */
import type { Row } from './timeline.js';
import { visible } from './visible-text.js';

/**
 * Rows in the list at once. Rebuilding a long session's tens of thousands of rows took seconds each
 * time, freezing the page while the session ran. The window follows the present, or the selected
 * row; the strip above still spans the whole session, and selecting a mark there brings its rows
 * into the list.
 */
export const LIST_WINDOW = 1000;

const time = (at: number) => {
  const d = new Date(at);
  return `${d.toTimeString().slice(0, 8)}.${String(d.getMilliseconds()).padStart(3, '0')}`;
};

/** What an item shows of its row: the item is written again only when this changes. */
const lookOf = (r: Row) => `${r.at}\u0000${r.lane}\u0000${r.seq ?? ''}\u0000${r.kind}\u0000${r.type}\u0000${r.transition ? `${r.transition.machine}:${r.transition.state}` : ''}\u0000${r.text}`;

/** The items drawn in each list, by their row's key, with what each shows. */
const drawn = new WeakMap<HTMLOListElement, Map<string, { li: HTMLLIElement; look: string }>>();

function write(li: HTMLLIElement, r: Row): void {
  li.textContent = '';
  for (const k of ['seq', 'state']) delete li.dataset[k];
  li.dataset.key = r.key;
  li.tabIndex = -1; // chosen from the keyboard too: one row is in the tab order (pressed.ts)
  li.dataset.kind = r.kind;
  li.dataset.type = r.type;
  li.dataset.lane = r.lane;
  if (r.seq !== undefined) li.dataset.seq = String(r.seq);
  if (r.transition) li.dataset.state = `${r.transition.machine}:${r.transition.state}`;
  li.classList.toggle('gap', r.lane === 'gap');
  const lane = r.lane === 'log' ? (r.seq !== undefined ? `#${r.seq}` : '') : r.lane;
  for (const [cls, text] of [['t', time(r.at)], ['lane', lane], ['what', visible(r.text)]] as const) {
    const span = document.createElement('span');
    span.className = cls;
    span.textContent = text;
    li.appendChild(span);
  }
}

/** The "n rows not listed" item at the `where` end, made or updated (none: removed). */
function more(list: HTMLOListElement, n: number, where: 'earlier' | 'later'): HTMLLIElement | undefined {
  let li = list.querySelector<HTMLLIElement>(`:scope > li[data-testid=more-${where}]`) ?? undefined;
  if (n === 0) return li?.remove(), undefined;
  if (!li) {
    li = document.createElement('li');
    li.className = 'more';
    li.dataset.testid = `more-${where}`;
  }
  const text = `${n} ${where} row(s) not listed: select a mark on the strip to go there`;
  if (li.textContent !== text) li.textContent = text;
  return li;
}

/**
 * Draws the list; `selected` rows after it are dimmed (they have not happened yet). Each item has
 * its row's key (`data-key`), by which a click on it selects the row (pressed.ts).
 */
export function renderList(list: HTMLOListElement, rows: Row[], selected: number | undefined): void {
  const keepScroll = list.scrollTop;
  const atBottom = list.scrollHeight - list.clientHeight - list.scrollTop < 30;
  const from = selected === undefined ? Math.max(0, rows.length - LIST_WINDOW) : Math.max(0, Math.min(selected - LIST_WINDOW / 2, rows.length - LIST_WINDOW));
  const to = Math.min(rows.length, from + LIST_WINDOW);
  const items = drawn.get(list) ?? new Map<string, { li: HTMLLIElement; look: string }>();
  drawn.set(list, items);
  // The items of rows no longer in the window go first, so that the walk below finds the rest in place.
  const wanted = new Set<string>();
  for (let i = from; i < to; i++) wanted.add(rows[i]!.key);
  for (const [key, { li }] of items) if (!wanted.has(key)) (li.remove(), items.delete(key));
  for (const li of list.querySelectorAll<HTMLLIElement>(':scope > li[data-key]')) if (!items.has(li.dataset.key!)) li.remove();
  // Then each item in its place: the ones already there in order are passed over, not moved.
  const order: HTMLLIElement[] = [];
  const earlier = more(list, from, 'earlier');
  if (earlier) order.push(earlier);
  for (let i = from; i < to; i++) {
    const r = rows[i]!;
    const look = lookOf(r);
    let item = items.get(r.key);
    if (!item) items.set(r.key, (item = { li: document.createElement('li'), look: '' }));
    if (item.look !== look) (write(item.li, r), (item.look = look));
    item.li.classList.toggle('selected', selected !== undefined && i === selected);
    item.li.classList.toggle('future', selected !== undefined && i > selected);
    order.push(item.li);
  }
  const later = more(list, rows.length - to, 'later');
  if (later) order.push(later);
  let at: ChildNode | null = list.firstChild;
  for (const li of order) {
    if (li === at) at = at.nextSibling;
    else list.insertBefore(li, at);
  }
  while (at) {
    const next: ChildNode | null = at.nextSibling;
    at.remove();
    at = next;
  }
  if (selected === undefined && atBottom) list.scrollTop = list.scrollHeight;
  else list.scrollTop = keepScroll;
  if (selected !== undefined) list.querySelector('li.selected')?.scrollIntoView({ block: 'nearest' });
}
