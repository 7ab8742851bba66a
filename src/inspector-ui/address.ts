/**
 * The page's address names the session shown (`/inspect/#ses_…`), one entry of the browser's history
 * per session looked at: back and forward move between them, and a link or an address typed in the
 * same tab shows its session. Until 2026-12-07 each click replaced the entry: back left the inspector,
 * and forward or a link to another session changed the address but not the session shown.
 */

/** The session the address names (percent-encoded or not), if any. */
export function addressedSession(): string | undefined {
  const hash = location.hash.slice(1);
  try {
    return decodeURIComponent(hash) || undefined;
  } catch {
    return hash; // not percent-encoding: taken as it is (and not found)
  }
}

/** A new history entry for session `id`, unless the address names it already. */
export function addressSession(id: string): void {
  if (id !== addressedSession()) history.pushState(null, '', `#${encodeURIComponent(id)}`);
}

/** Calls `follow` whenever the address changes under the page (back, forward, a link). */
export function onAddressChange(follow: () => void): void {
  // Both: going back to an entry pushState made fires popstate only, a link's new hash both.
  window.addEventListener('popstate', follow);
  window.addEventListener('hashchange', follow);
}
