/**
 * A system error writing one of the store's files (ENOSPC, EDQUOT, EIO, EFBIG, EACCES…: a full or
 * failing disk) as a typed error with a stable code, its errno in `data.cause`. spec/errors.md.
 */
import { TroupeError } from '../core/errors.js';

export function writeFailed(code: 'log_write_failed' | 'index_write_failed', what: string, err: unknown): TroupeError {
  const cause = (err as NodeJS.ErrnoException).code;
  return new TroupeError(code, `${what} cannot be written: ${(err as Error).message}`, cause ? { cause } : {});
}
