/**
 * Failures of a turn's effects, classified into stable codes before they reach the turn machine,
 * so that a turn never ends with a raw vendor or library error.
 */
import { isTroupeError } from '../core/errors.js';
import { isProviderError, type ProviderErrorKind } from '../core/provider.js';

export class StepError extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** When the vendor said to try again (a rate limit's retry-after), for the client. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'StepError';
  }
}

const PROVIDER_CODES: Record<ProviderErrorKind, string> = {
  auth: 'provider_auth',
  rate_limited: 'provider_rate_limited',
  overloaded: 'provider_overloaded',
  context_overflow: 'context_overflow',
  invalid_request: 'provider_invalid_request',
  model_not_found: 'model_not_found',
  network: 'provider_network',
  aborted: 'provider_network',
};

export function classify(err: unknown): StepError {
  if (err instanceof StepError) return err;
  if (isProviderError(err)) return new StepError(PROVIDER_CODES[err.kind], err.vendorMessage, err.retryAfterMs);
  if (isTroupeError(err)) return new StepError(err.code, err.message);
  return new StepError('internal_error', err instanceof Error ? err.message : String(err));
}
