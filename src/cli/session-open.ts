/**
 * Opening the ACP session a command works on: `session/new` in a directory, or `session/resume` of
 * an existing one (no replay: the CLI shows only what happens from now on). The session's cwd comes
 * from the daemon when not given, since a session's cwd never changes. A new session is made with its
 * model (`_meta.troupe.model`); the mode is then set with `session/set_mode`, and a resumed session's
 * model with `session/set_config_option`.
 */
import { isAbsolute, resolve } from 'node:path';
import { TroupeError } from '../core/errors.js';
import type { AcpLink } from './acp-link.js';
import { rpcToError } from './acp-link.js';
import type { DaemonClient } from './daemon.client.js';

/**
 * The command-line options of a command that opens a session and talks in it (`troupe run`, `troupe
 * chat`): where and how the session is opened, and `--yes` for its permission questions.
 */
export const SESSION_OPTIONS = {
  cwd: { type: 'string' },
  session: { type: 'string' },
  model: { type: 'string' },
  mode: { type: 'string' },
  'mcp-config': { type: 'string' },
  'add-dir': { type: 'string', multiple: true },
  yes: { type: 'boolean', short: 'y' },
} as const;

export interface OpenOptions {
  sessionId?: string;
  cwd?: string;
  mode?: string;
  model?: string;
  /** ACP `mcpServers` (`--mcp-config`); without, a resumed session keeps those it has. */
  mcpServers?: unknown[];
  /**
   * ACP `additionalDirectories` (`--add-dir`, relative to the current directory); without, a
   * resumed session keeps those it has (ACP takes the whole list again on every resume).
   */
  additionalDirectories?: string[];
}

export interface OpenedSession {
  sessionId: string;
  cwd: string;
  /** The additional directories the session was opened with. */
  additionalDirectories: string[];
  resumed: boolean;
}

/**
 * {@link openSession}, unless the person interrupted (Ctrl-C) while it ran: then undefined, and a
 * session it made meanwhile is deleted again (made or not, nothing of it stays: the command exits 130).
 */
export async function openUnlessInterrupted(link: AcpLink, client: DaemonClient, opts: OpenOptions, interrupted: () => boolean): Promise<OpenedSession | undefined> {
  const opened = await openSession(link, client, opts).catch((err: unknown) => {
    if (!interrupted()) throw err;
    return undefined;
  });
  if (!interrupted()) return opened;
  if (opened && !opened.resumed) await client.remove(opened.sessionId).catch(() => undefined);
  return undefined;
}

/** Creates or resumes the session, then applies mode and model. */
export async function openSession(link: AcpLink, client: DaemonClient, opts: OpenOptions): Promise<OpenedSession> {
  const call = async <T>(p: Promise<T>): Promise<T> => {
    try {
      return await p;
    } catch (err) {
      throw rpcToError(err, client.target);
    }
  };
  let opened: OpenedSession;
  if (opts.sessionId) {
    // Asking the management API first gives a clear `session_not_found` and the session's cwd.
    const entry = await client.session(opts.sessionId);
    const cwd = opts.cwd ? fromHere(opts.cwd) : entry.cwd;
    const dirs = opts.additionalDirectories ? absolute(opts.additionalDirectories) : (entry.additionalDirectories ?? []);
    // Without `mcpServers` the session keeps the MCP servers its own client gave it (an empty list would stop them).
    await call(
      link.agent.request('session/resume', {
        sessionId: opts.sessionId,
        cwd,
        ...(dirs.length ? { additionalDirectories: dirs } : {}),
        ...(opts.mcpServers ? { mcpServers: opts.mcpServers as never } : {}),
      }),
    );
    opened = { sessionId: opts.sessionId, cwd, additionalDirectories: dirs, resumed: true };
  } else {
    const cwd = fromHere(opts.cwd ?? '.');
    const dirs = absolute(opts.additionalDirectories ?? []);
    // --model goes with the session (`_meta.troupe.model`): a default no session could be made with
    // (TROUPE_MODEL=scripted/nope) is then not consulted, and a mistyped one leaves no session.
    const model = opts.model ? { _meta: { troupe: { model: opts.model } } } : {};
    const res = await call(link.agent.request('session/new', { cwd, ...(dirs.length ? { additionalDirectories: dirs } : {}), mcpServers: (opts.mcpServers ?? []) as never, ...model }));
    opened = { sessionId: res.sessionId, cwd, additionalDirectories: dirs, resumed: false };
  }
  try {
    if (opts.mode) await call(link.agent.request('session/set_mode', { sessionId: opened.sessionId, modeId: opts.mode }));
    if (opts.model && opened.resumed) await call(link.agent.request('session/set_config_option', { sessionId: opened.sessionId, configId: 'model', value: opts.model }));
  } catch (err) {
    // A new session that cannot be set up as asked (a mistyped --model or --mode) holds nothing:
    // delete it rather than leave an empty session, and its process, behind the error.
    if (!opened.resumed) await client.remove(opened.sessionId).catch(() => undefined);
    throw err;
  }
  return opened;
}

const absolute = (dirs: string[]) => dirs.map(fromHere);

/**
 * `path` made absolute against the current directory. A shell can stand in a directory that was
 * removed since (a worktree removed, a build cleaned): then a relative path means nothing, and
 * until 2026-12-06 run and chat failed with Node's "ENOENT: no such file or directory, uv_cwd".
 */
function fromHere(path: string): string {
  if (isAbsolute(path)) return resolve(path);
  let here: string;
  try {
    here = process.cwd();
  } catch (err) {
    const errno = (err as NodeJS.ErrnoException).code ?? 'ENOENT';
    throw new TroupeError(
      'invalid_params',
      path === '.' ? `the current directory is gone (${errno}): cd to one that exists, or give --cwd DIR` : `'${path}' is relative to the current directory, which is gone (${errno}): give an absolute path`,
    );
  }
  return resolve(here, path);
}
