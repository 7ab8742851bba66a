/**
 * The red notices in the inspector's header. `session`: about the session shown (it is gone, its
 * log feed had a gap), removed when another is shown; `feed`: about the live feed of every session
 * (transitions missed), kept. The header has one notice of each `kind` (by default, of each text),
 * saying the latest and how many times: until 2026-12-07 each was one more notice, and a page left
 * open on a busy daemon piled them up across the header.
 */
import { visible } from './visible-text.js';

export function sayNotice(header: HTMLElement, text: string, about: 'session' | 'feed', kind = text): void {
  const said = [...header.querySelectorAll<HTMLElement>('.gap')].find((g) => g.dataset.kind === kind);
  const span = said ?? document.createElement('span');
  const times = Number(span.dataset.times ?? 0) + 1;
  span.className = 'gap';
  span.dataset.about = about;
  span.dataset.kind = kind;
  span.dataset.times = String(times);
  span.textContent = visible(times > 1 ? `${text} (${times} times)` : text);
  if (!said) header.appendChild(span);
}
