/**
 * What a management route handler sees: `server.route('GET', '/v1/sessions/:id', handler)`.
 */
import type { ErrorCode } from '../../core/errors.js';
import type { HeaderMap } from './http-exchange.js';
import type { SseStream } from './sse-stream.js';

export interface RouteRequest {
  /** Upper case: GET, POST, ... */
  readonly method: string;
  readonly path: string;
  /** Captures of `:name` segments (decoded); a trailing `*` is captured as `params['*']`. */
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** Header names are lower case. */
  readonly headers: HeaderMap;
  /** The parsed JSON body (undefined when there is none; a body of another Content-Type is refused with 415 first). */
  readonly body: unknown;
  /** The raw body bytes, when one was sent. */
  readonly rawBody: Buffer | undefined;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
}

export interface RouteResponse {
  /** True once a response (or an SSE stream) was started. */
  readonly sent: boolean;
  json(status: number, value: unknown, headers?: Record<string, string>): void;
  /** `{ error: { code, message, data? } }` with a stable code from src/core/errors.ts. */
  error(status: number, code: ErrorCode, message: string, data?: Record<string, unknown>): void;
  send(status: number, headers: Record<string, string>, body?: string | Buffer): void;
  redirect(location: string, status?: 302 | 303): void;
  /**
   * Starts an SSE stream (200, text/event-stream) with keep-alives and backpressure. Throws
   * `capacity_exceeded` (503, nothing sent) when the server already holds its maximum of them.
   */
  sse(headers?: Record<string, string>): SseStream;
}

/**
 * A route handler. A returned value (not undefined) is sent as 200 JSON unless the handler already
 * responded; a thrown TroupeError becomes its table status with `{ error }`; anything else 500.
 * Returning undefined without responding sends 204.
 */
export type RouteHandler = (req: RouteRequest, res: RouteResponse) => unknown | Promise<unknown>;
