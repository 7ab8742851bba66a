/**
 * A click on an item of a list the page redraws while it is pressed (the session list, read again
 * every 3 s and redrawn row by row as the live feed moves them; the timeline, redrawn up to four
 * times a second while a session runs). The browser sends `click` to the element the press and the
 * release share; when the item pressed was replaced by its redrawn copy before the release, they
 * share only the list, and a click on the item itself was never seen: until 2026-12-07 such a click
 * did nothing, often while a session streamed. Here the item is known by its key, not its element:
 * a press and a release of the main button on items of the same key select it.
 */
export function onPressed(list: HTMLElement, keyOf: (item: Element) => string | undefined, select: (key: string) => void): void {
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
  // From the keyboard: Enter or Space on the item that has the focus (items are focusable, and keep
  // the focus through a redraw: keepingFocus). Until 2026-12-07 no row could be chosen without a mouse.
  list.addEventListener('keydown', (ev) => {
    const k = ev.key === 'Enter' || ev.key === ' ' ? key(ev) : undefined;
    if (k === undefined) return;
    ev.preventDefault(); // (Space would scroll the page)
    select(k);
  });
}

/**
 * Runs `redraw`, which replaces items of `list`: the item that had the focus before (by its key)
 * has it after, so that a keyboard user's place in the list survives its redraws.
 */
export function keepingFocus(list: HTMLElement, keyOf: (item: Element) => string | undefined, redraw: () => void): void {
  const active = document.activeElement;
  const focused = active && list.contains(active) ? keyOf(active) : undefined;
  redraw();
  if (focused === undefined || (document.activeElement && list.contains(document.activeElement))) return;
  for (const item of list.querySelectorAll<HTMLElement>('[tabindex]')) {
    if (keyOf(item) === focused) return item.focus({ preventScroll: true });
  }
}
