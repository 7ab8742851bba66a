/**
 * One request to an MCP server through the SDK, given a signal of its own (spec/tools.md §7).
 *
 * The SDK adds an `abort` listener to the signal of each request and never removes it, and that
 * listener holds the request's promise, so its result: the result lived as long as the signal
 * given. A turn's signal outlives its calls, and one made by `AbortSignal.any` (a call's, joining
 * the turn's and its own time limit) Node keeps in a set of its own for as long as it has abort
 * listeners and has not aborted, which for a call that ended is for ever: until 2026-12-07 each
 * call's whole result, up to the 10 MB a message may have, stayed in the agent's heap until it
 * exited, and some fifty of them took its 512 MB (and every session of the editor with it).
 * Here the SDK gets a signal no one else holds, aborted when the caller's is; the listener that
 * links the two is removed when the request ends, and the SDK's listener goes with that signal.
 * (A fix was proposed to the SDK, modelcontextprotocol/typescript-sdk#1672, and closed; 1.32.2, which
 * troupe uses, leaves the listener.)
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ClientRequest } from '@modelcontextprotocol/sdk/types.js';
import type * as z from 'zod';

/** `client.request(request, schema, options)`, the SDK given a signal of this request's own. */
export async function requestOf<T>(client: Client, request: ClientRequest, schema: z.ZodType<T>, options: RequestOptions): Promise<T> {
  const { signal, ...rest } = options;
  if (!signal) return client.request(request, schema, rest) as Promise<T>;
  const own = new AbortController();
  const abort = () => own.abort(signal.reason);
  if (signal.aborted) abort();
  else signal.addEventListener('abort', abort, { once: true });
  try {
    return (await client.request(request, schema, { ...rest, signal: own.signal })) as T;
  } finally {
    signal.removeEventListener('abort', abort);
  }
}
