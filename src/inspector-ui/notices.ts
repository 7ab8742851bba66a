/**
 * The notices in the inspector's header. `session`: about the session shown (it is gone, its log
 * feed had a gap), removed when another is shown; `feed`: about the live feed of every session
 * (transitions missed), kept. The header has one notice of each `kind` (by default, of each text),
 * saying the latest and how many times: until 2026-12-07 each was one more notice, and a page left
 * open on a busy daemon piled them up across the header. A notice is red while what it says holds;
 * once the page has made it whole again (mendNotice) it says when, and is no longer red.
 */
import { visible } from './visible-text.js';

const noticeOf = (header: HTMLElement, kind: string) => [...header.querySelectorAll<HTMLElement>('.gap')].find((g) => g.dataset.kind === kind);
const counted = (span: HTMLElement) => {
  const times = Number(span.dataset.times);
  return times > 1 ? `${span.dataset.text ?? ''} (${times} times)` : (span.dataset.text ?? '');
};

export function sayNotice(header: HTMLElement, text: string, about: 'session' | 'feed', kind = text): void {
  const said = noticeOf(header, kind);
  const span = said ?? document.createElement('span');
  span.className = 'gap';
  span.dataset.about = about;
  span.dataset.kind = kind;
  span.dataset.text = text;
  span.dataset.times = String(Number(span.dataset.times ?? 0) + 1);
  delete span.dataset.mended;
  span.textContent = visible(counted(span));
  if (!said) header.appendChild(span);
}

/**
 * What the notice of `kind` said no longer holds (the page read again what a gap of the live feed
 * made it miss): it stays, with `how` (when that was), no longer red. A new gap makes it red again.
 */
export function mendNotice(header: HTMLElement, kind: string, how: string): void {
  const span = noticeOf(header, kind);
  if (!span) return;
  span.dataset.mended = 'true';
  span.textContent = visible(`${counted(span)}: ${how}`);
}
