/**
 * The daemon's answer to `session/list`: a page of the session index, without a child (spec/daemon.md
 * §Relay).
 */
import { TroupeError } from '../../core/errors.js';
import type { SessionIndex } from '../../store/index.js';
import { assertListCwd } from '../../acp/session-directories.js';
import { sessionInfo } from '../../acp/session-info.js';
import { kernelDirectory } from '../../tools/kernel-directory.js';
import { errorResponse, type JsonRpcMessage } from './rpc.js';

export async function sessionListAnswer(index: SessionIndex, msg: JsonRpcMessage): Promise<JsonRpcMessage> {
  const p = (msg.params ?? {}) as { cwd?: unknown; cursor?: unknown };
  // Checked as a child's SDK checks the requests it answers: a wrong type is the client's error, not ours.
  if (typeof p !== 'object' || Array.isArray(p) || (p.cwd !== undefined && p.cwd !== null && typeof p.cwd !== 'string')) {
    return errorResponse(msg.id, 'invalid_params', 'session/list takes {cwd?: string, cursor?: string}');
  }
  try {
    assertListCwd(p.cwd as string | null | undefined);
    // An editor's own agent on this home may have made sessions since (it writes the index file).
    await index.refreshIfChanged();
    // The directory the kernel reaches, as a child's session/list compares it (`/a/link/..` is where
    // `link` leads, as sessions' cwds are stored); until 2026-12-07 the daemon compared it as text.
    const page = index.list({ ...(p.cwd ? { cwd: kernelDirectory(p.cwd as string) } : {}), ...(p.cursor ? { cursor: p.cursor as string } : {}), limit: 50 });
    const sessions = page.sessions.map(sessionInfo);
    return { jsonrpc: '2.0', id: msg.id, result: { sessions, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) } };
  } catch (err) {
    const e = err instanceof TroupeError ? err : new TroupeError('internal_error', String(err));
    return errorResponse(msg.id, e.code, e.message, e.data);
  }
}
