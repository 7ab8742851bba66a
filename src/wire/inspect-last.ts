/**
 * The most transitions one answer of `GET /v1/sessions/:id/inspect?last=N` holds (docs/inspector.md).
 * Here, not in the daemon, so that the CLI (`troupe inspect --last`), which may not import the
 * daemon, refuses a larger count before it asks.
 */
export const INSPECT_LAST_MAX = 500;
