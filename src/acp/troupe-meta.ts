/**
 * troupe's own fields of a request's `_meta` (`_meta.troupe`): what the daemon adds to the requests
 * it sends its children (the client's capabilities, the directories to keep, the seq its clients
 * were sent), read here in one way.
 */

/** `params._meta.troupe`, if it is an object. */
export function troupeMeta(params: { _meta?: unknown }): Record<string, unknown> | undefined {
  const troupe = (params._meta as { troupe?: unknown } | null | undefined)?.troupe;
  return troupe && typeof troupe === 'object' && !Array.isArray(troupe) ? (troupe as Record<string, unknown>) : undefined;
}

/**
 * A field of the daemon's own `session/resume` of a session whose child it started again: the
 * highest update seq its clients were sent. A process killed at any moment has put in its log every
 * event it sent, but may not have sent every event it put there (a stdout write still buffered when
 * it died). The new process sends those after this seq, with the events its open appended (the end
 * of the turn the crash interrupted), so that the clients miss none of the history (spec/daemon.md
 * §Relay).
 */
export const SENT_SEQ = 'sentSeq';

/** The sent seq a resume carries, if it is one (a non-negative integer). */
export function sentSeqOf(params: { _meta?: unknown }): number | undefined {
  const value = troupeMeta(params)?.[SENT_SEQ];
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}
