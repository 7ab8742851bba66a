/**
 * The running turn of a session, read from its event log (the management API's SSE replay): the
 * latest `turn_started` with no `turn_completed` after it. Steering needs it as `expectedTurnId`.
 */
import type { DaemonClient } from './daemon.client.js';

/** The running turn's id, or undefined when the session is idle. */
export async function runningTurnId(client: DaemonClient, sessionId: string): Promise<string | undefined> {
  const detail = await client.session(sessionId);
  // The daemon names the running turn; the log is read only when it does not (an older daemon).
  if (detail.turnId) return detail.turnId;
  const last = detail.lastSeq;
  if (!last) return undefined;
  const abort = new AbortController();
  const open = new Set<string>();
  let latest: string | undefined;
  try {
    for await (const m of client.events(sessionId, 0, abort.signal)) {
      if (m.event !== 'event') break;
      const e = JSON.parse(m.data) as { seq: number; type: string; turnId?: string };
      if (e.type === 'turn_started' && e.turnId) open.add((latest = e.turnId));
      if (e.type === 'turn_completed' && e.turnId) open.delete(e.turnId);
      if (e.seq >= last) break;
    }
  } finally {
    abort.abort();
  }
  return latest && open.has(latest) ? latest : [...open].at(-1);
}
