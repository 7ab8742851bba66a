/**
 * A session's additional directories: ACP's `additionalDirectories` ("Additional Workspace Roots"),
 * further roots beside the cwd that its tools may use, the cwd staying the base of relative paths.
 * `session/new`, `session/load` and `session/resume` each give the whole list; omitted or empty is
 * none (stored directories are never brought back implicitly). The daemon's own resume of a session
 * (a child started again after a crash or an idle stop) keeps the list its log holds instead:
 * no client asked for a change.
 */
import { statSync } from 'node:fs';
import { isAbsolute, sep } from 'node:path';
import { TroupeError } from '../core/errors.js';
import { kernelDirectory } from '../tools/kernel-directory.js';
import { troupeMeta } from './troupe-meta.js';

/** A `_meta.troupe` flag on a daemon's own `session/resume`: keep the session's directories. */
export const KEEP_DIRECTORIES = 'keepDirectories';

/** Whether a lifecycle request is the daemon's own resume, which keeps the directories. */
export function keepsDirectories(params: { _meta?: unknown }): boolean {
  return troupeMeta(params)?.[KEEP_DIRECTORIES] === true;
}

/**
 * The additional directories a lifecycle request asks for, checked: each an absolute path to an
 * existing directory (`invalid_params` otherwise, naming it: a root is never dropped silently).
 * Each is kept resolved (`/a/b/` and `/a/x/../b` are `/a/b`), as a session's cwd is compared and
 * listed; repeats, and the cwd itself, are left out, the first of each kept in its place. (Until
 * 2026-12-07 they were compared as given: an editor's `/ws/` beside the cwd `/ws` was a second
 * root, named twice to the model and to MCP servers, and `session/list` reported it so.) A `..` is
 * resolved as the kernel resolves it, after the symlinks before it (kernelDirectory): the directory
 * kept is the one the stat found (until 2026-12-07 `/a/link/..` was kept as `/a`).
 */
export function requestedDirectories(cwd: string, value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new TroupeError('invalid_params', `additionalDirectories must be an array of absolute paths, got ${JSON.stringify(value)}`);
  const out: string[] = [];
  const base = kernelDirectory(cwd);
  for (const given of value) {
    if (typeof given !== 'string' || given === '') throw new TroupeError('invalid_params', `additionalDirectories holds ${JSON.stringify(given)}, not an absolute path`);
    assertDirectory(given, 'additionalDirectories');
    const dir = kernelDirectory(given);
    if (dir !== base && !out.includes(dir)) out.push(dir);
  }
  return out;
}

/**
 * The cwd a session keeps (checked with {@link assertDirectory} first): as given, unless a `..` in it
 * is to be taken as the kernel takes it, after the symlinks before it (kernelDirectory): `/a/link/..`,
 * with `link -> /b/c`, is `/b`, where its stat looked and where its tools work. Until 2026-12-07 such a
 * cwd was kept as given and read as text elsewhere (`/a`): listed so, its project instructions read
 * from `/a`, its MCP servers given `/a` as their root.
 */
export function sessionCwd(given: string): string {
  return given.split(sep).includes('..') ? kernelDirectory(given) : given;
}

/**
 * session/list's `cwd` filter: absolute, as ACP has it (a relative one would be resolved against the
 * agent's own directory, which the client does not know). Not checked on disk: a session listed by
 * a directory since removed is still listed.
 */
export function assertListCwd(cwd: string | null | undefined): void {
  if (cwd && !isAbsolute(cwd)) throw new TroupeError('invalid_params', `session/list's cwd must be an absolute path, got ${JSON.stringify(cwd)}`);
}

/** Synchronous: one stat, and `session/new` waits for it (a thread-pool round trip costs more). */
export function assertDirectory(path: string, field: string): void {
  if (typeof path !== 'string' || !isAbsolute(path)) throw new TroupeError('invalid_params', `${field} must be an absolute path, got ${JSON.stringify(path)}`);
  let info;
  try {
    info = statSync(path);
  } catch {
    throw new TroupeError('invalid_params', `${field} ${path} does not exist`);
  }
  if (!info.isDirectory()) throw new TroupeError('invalid_params', `${field} ${path} is not a directory`);
}
