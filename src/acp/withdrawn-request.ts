/**
 * A wait of a request handler that the request's withdrawal ends at once: the SDK aborts the
 * handler's `signal` at the client's `$/cancel_request`, and the handler answers -32800
 * (`request_cancelled`, spec/errors.md) instead of a result once the wait is over.
 */
import { TroupeError } from '../core/errors.js';

/**
 * `work`, unless `signal` aborts first (or has): then `onWithdrawn` runs (what the work started is
 * undone there, not waited for) and this rejects `request_cancelled` with `message` and `data`.
 */
export async function unlessWithdrawn<T>(work: Promise<T>, signal: AbortSignal | undefined, onWithdrawn: () => void, message: string, data: Record<string, unknown> = {}): Promise<T> {
  if (!signal) return work;
  let onAbort: () => void = () => undefined;
  const withdrawn = new Promise<never>((_, reject) => {
    onAbort = () => reject(new TroupeError('request_cancelled', `Request cancelled: ${message}`, data));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, withdrawn]);
  } catch (err) {
    if (signal.aborted) onWithdrawn();
    throw err;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
