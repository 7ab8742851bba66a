/**
 * A file the CLI reads itself (a session's event log for `log dump`, the daemon's log for
 * `daemon logs`) that is there but cannot be read: one error with a stable code, not Node's words.
 */
import { TroupeError } from '../core/errors.js';

/**
 * `err`, a system error reading `path` (EACCES, EPERM, EIO, ELOOP…), as `log_read_failed` with its
 * errno in `data.cause`; undefined for anything that is not a system error (a bug: reported as is).
 */
export function logReadFailed(path: string, err: unknown): TroupeError | undefined {
  const errno = (err as NodeJS.ErrnoException | undefined)?.code;
  if (typeof errno !== 'string') return undefined;
  return new TroupeError('log_read_failed', `cannot read ${path}: ${systemErrorReason(err)} (${errno})`, { path, cause: errno });
}

/** A system error's words without its errno and path: 'permission denied' of "EACCES: permission denied, open '…'". */
export function systemErrorReason(err: unknown): string {
  return /^[A-Z0-9]+: ([^,]+)/.exec((err as Error | undefined)?.message ?? '')?.[1] ?? 'system error';
}
