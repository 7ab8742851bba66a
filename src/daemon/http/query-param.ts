/**
 * One query parameter of a management or inspector route: `null` when it is not given, refused when
 * it is given more than once. Two values for one setting say nothing about which was meant: until
 * 2026-12-07 most routes took the first and ignored the others (spec/daemon.md §Management API).
 */
import { TroupeError, type ErrorCode } from '../../core/errors.js';
import { headOf } from '../../core/text-cut.js';

export function oneParam(query: URLSearchParams, name: string, code: ErrorCode = 'invalid_params'): string | null {
  const given = query.getAll(name);
  if (given.length > 1) throw new TroupeError(code, `${name} is given more than once (${given.length} times)`, { [name]: given.slice(0, 4).map((v) => headOf(v, 64)) });
  return given[0] ?? null;
}
