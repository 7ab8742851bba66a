/**
 * What a client offered, as troupe uses it: which of its methods the agent may call (file reads and
 * writes through its buffers, commands in its terminals) and which updates it takes (notices,
 * compaction). One rule, whatever carried the offer: ACP's schema (the SDK reads `initialize` by it),
 * where `fs.readTextFile`, `fs.writeTextFile` and `terminal` are booleans and the session capabilities
 * objects, and anything else is not offered. A daemon's `_meta.troupe.clientCapabilities` (to a pooled
 * child) is the client's initialize as it sent it, never read by that schema: until 2026-12-07 it
 * was read by truthiness, and a terminal offered as `{}` or a read as `"yes"` was used by a pooled
 * child, refused by one spawned for the session (initialized through the SDK), and routed by the
 * daemon to a client that had not offered it (spec/daemon.md §Relay: only `true` is served).
 */
export interface ClientOffer {
  readTextFile: boolean;
  writeTextFile: boolean;
  terminal: boolean;
  notices: boolean;
  compaction: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `caps`: a client's `clientCapabilities`, as parsed by the SDK or as sent. */
export function clientOffer(caps: unknown): ClientOffer {
  const c = isObject(caps) ? caps : {};
  const fs = isObject(c.fs) ? c.fs : {};
  const session = isObject(c.session) ? c.session : {};
  return {
    readTextFile: fs.readTextFile === true,
    writeTextFile: fs.writeTextFile === true,
    terminal: c.terminal === true,
    notices: isObject(session.notices),
    compaction: isObject(session.compaction),
  };
}
