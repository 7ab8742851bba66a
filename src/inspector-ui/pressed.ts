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
  const key = (ev: MouseEvent) => (ev.target instanceof Element ? keyOf(ev.target) : undefined);
  list.addEventListener('mousedown', (ev) => {
    pressed = ev.button === 0 ? key(ev) : undefined;
  });
  list.addEventListener('mouseup', (ev) => {
    const released = ev.button === 0 ? key(ev) : undefined;
    if (released !== undefined && released === pressed) select(released);
    pressed = undefined;
  });
}
