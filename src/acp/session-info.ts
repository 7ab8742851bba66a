/**
 * One session of a `session/list` answer (ACP `SessionInfo`), from its index entry: the same for
 * `troupe acp` and for the daemon, which answers the method itself (spec/daemon.md §Relay).
 */
import type * as acp from '@agentclientprotocol/sdk';
import type { SessionEntry } from '../store/index.js';

/**
 * `SessionInfo` has no word for a session that cannot be opened: `_meta.troupe` carries what the
 * index knows of it, as `GET /v1/sessions` does (spec/daemon.md §Relay, docs/editors.md). `status`:
 * `active`, `closed` or `failed` (crashed past the restart intensity: its requests are refused
 * `session_failed` until an operator revives it); `damaged`: its log does not open (`log_corrupt`,
 * from byte `offset`). Until 2026-12-07 a client listing over ACP could not tell either from a
 * session that opens.
 */
export function sessionInfo(s: SessionEntry): acp.SessionInfo {
  return {
    sessionId: s.id,
    cwd: s.cwd,
    // Always the whole list, `[]` for none: ACP v1's session-list page has an omitted field mean "not
    // reported", which a client must not take for none (it may keep, or send again, roots the session
    // no longer has); the SDK 2.4.0 schema calls the two equal. `[]` means none under both. Until
    // 2026-12-07 a session without additional directories (one whose load had cleared them too) had
    // no field.
    additionalDirectories: s.additionalDirectories ?? [],
    ...(s.title ? { title: s.title } : {}),
    updatedAt: new Date(s.updatedAt).toISOString(),
    _meta: { troupe: { status: s.status, ...(s.damaged ? { damaged: { code: s.damaged.code, offset: s.damaged.offset } } : {}) } },
  };
}
