/**
 * A click on an item of a list the page redraws while it is pressed (the session list, read again
 * every 3 s and redrawn row by row as the live feed moves them; the timeline, redrawn up to four
 * times a second while a session runs). The browser sends `click` to the element the press and the
 * release share; when the item pressed was replaced by its redrawn copy before the release, they
 * share only the list, and a click on the item itself was never seen: until 2026-12-07 such a click
 * did nothing, often while a session streamed. Here the item is known by its key, not its element:
 * a press and a release of the main button on items of the same key select it.
 */
export function onPressed(
  list: HTMLElement,
  keyOf: (item: Element) => string | undefined,
  select: (key: string) => void,
  /** Every item's key in the list's order, where the list draws only some of them (the timeline's window). */
  order: () => string[] = () => items(list).map(keyOf).filter((k): k is string => k !== undefined),
): void {
  let pressed: string | undefined;
  const key = (ev: Event) => (ev.target instanceof Element ? keyOf(ev.target) : undefined);
  list.addEventListener('mousedown', (ev) => {
    pressed = ev.button === 0 ? key(ev) : undefined;
  });
  list.addEventListener('mouseup', (ev) => {
    const released = ev.button === 0 ? key(ev) : undefined;
    if (released !== undefined && released === pressed) select(released);
    pressed = undefined;
  });
  // The item focused is the one Tab comes back to (roving tabindex: one item of the list is in the
  // page's tab order, not each of them).
  list.addEventListener('focusin', (ev) => {
    if (key(ev) !== undefined) rove(list, ev.target as HTMLElement);
  });
  // From the keyboard: Enter or Space choose the item that has the focus (items are focusable, and
  // keep the focus through a redraw: keepingFocus); Up and Down move to the item before or after it,
  // Home and End to the first or last, and choose it, as a click does. Until 2026-12-07 no row could
  // be chosen without a mouse, then only by Tab, through every row before it, arrows doing nothing.
  list.addEventListener('keydown', (ev) => {
    const k = key(ev);
    if (k === undefined || ev.altKey || ev.ctrlKey || ev.metaKey || ev.shiftKey) return;
    let to: string | undefined = k;
    if (ev.key === 'ArrowUp' || ev.key === 'ArrowDown' || ev.key === 'Home' || ev.key === 'End') {
      const keys = order();
      const at = keys.indexOf(k);
      to = ev.key === 'Home' ? keys[0] : ev.key === 'End' ? keys.at(-1) : at < 0 ? undefined : keys[at + (ev.key === 'ArrowUp' ? -1 : 1)];
    } else if (ev.key !== 'Enter' && ev.key !== ' ') return;
    ev.preventDefault(); // (Space and the arrows would scroll the list or the page)
    if (to === undefined) return;
    select(to);
    // The item chosen has the focus (the list was redrawn around it, if it draws only some items).
    items(list).find((item) => keyOf(item) === to)?.focus();
  });
}

/** The list's items: the elements that can have the focus. */
const items = (list: HTMLElement) => [...list.querySelectorAll<HTMLElement>('[tabindex]')];

/** `item` is the list's one item in the page's tab order. */
function rove(list: HTMLElement, item: HTMLElement): void {
  for (const other of list.querySelectorAll<HTMLElement>('[tabindex="0"]')) if (other !== item) other.tabIndex = -1;
  item.tabIndex = 0;
}

/**
 * Runs `redraw`, which replaces items of `list`: the item that had the focus before (by its key)
 * has it after, so that a keyboard user's place in the list survives its redraws; and one item is in
 * the page's tab order, as before the redraw (else the selected one, else the first), so that Tab
 * goes into the list and on past it, not through each of its rows (a thousand in the timeline).
 */
export function keepingFocus(list: HTMLElement, keyOf: (item: Element) => string | undefined, redraw: () => void): void {
  const active = document.activeElement;
  const focused = active && list.contains(active) ? keyOf(active) : undefined;
  const before = list.querySelector('[tabindex="0"]');
  const roving = before ? keyOf(before) : undefined;
  redraw();
  const all = items(list);
  const find = (k: string | undefined) => (k === undefined ? undefined : all.find((item) => keyOf(item) === k));
  const tabbed = find(focused) ?? find(roving) ?? list.querySelector<HTMLElement>('.selected[tabindex]') ?? all[0];
  if (tabbed) rove(list, tabbed);
  if (focused === undefined || (document.activeElement && list.contains(document.activeElement))) return;
  find(focused)?.focus({ preventScroll: true });
}
