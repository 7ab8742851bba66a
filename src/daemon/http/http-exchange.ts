/**
 * One HTTP request/response on uWS, wrapped once: the request is copied out of uWS's stack-allocated
 * object, aborts are tracked (a uWS response must never be touched after onAborted), every write is
 * corked, bodies are read under a size limit, and streamed responses get write/drain backpressure.
 */
import { ERROR_CODES, TroupeError, type ErrorCode } from '../../core/errors.js';
import { statusLine, type HttpRequest, type HttpResponse } from './uws.js';

export type HeaderMap = Readonly<Record<string, string>>;

/** Thrown by {@link HttpExchange.readBody} when the body is over the limit. */
export function payloadTooLarge(limit: number): TroupeError {
  return new TroupeError('payload_too_large', `Request body exceeds ${limit} bytes`, { limit });
}

/** Body bytes of HTTP exchanges, received and sent (for /metrics): one per family of routes. */
export interface ByteMeter {
  received: number;
  sent: number;
}

export class HttpExchange {
  readonly method: string;
  readonly path: string;
  readonly rawQuery: string;
  readonly headers: HeaderMap;
  /** True once the client went away; the uWS response is dead then. */
  aborted = false;
  /** True once `end` was called on the uWS response. */
  private finished = false;
  /** True once status and headers went out on a streamed response. */
  streaming = false;
  private readonly abortHandlers: Array<() => void> = [];
  private drainHandler: (() => void) | undefined;
  /** Made on first use of `signal`: most requests never ask for it, and it is not free. */
  private controller: AbortController | undefined;
  /** The CORS headers of a request from an origin allowed with --allow-origin, sent on every response to it. */
  private crossOrigin: Record<string, string> | undefined;

  /**
   * @param meter where this exchange counts its body bytes, as read and as written (response
   * bodies, stream chunks, the comments that drain a stream); headers are not counted. The
   * dispatcher picks it by route family.
   */
  constructor(
    readonly res: HttpResponse,
    req: HttpRequest,
    readonly meter: ByteMeter,
  ) {
    this.method = req.getMethod().toUpperCase();
    this.path = req.getUrl();
    this.rawQuery = req.getQuery() ?? '';
    this.headers = readHeaders(req);
    res.onAborted(() => {
      this.aborted = true;
      this.controller?.abort();
      for (const fn of this.abortHandlers.splice(0)) fn();
    });
  }

  /**
   * Lets the page of `origin` read this response (CORS): the browser checks these headers, on
   * errors too, and lets a script see only the response headers named as exposed (the ACP ids).
   */
  allowCrossOrigin(origin: string): void {
    this.crossOrigin = { 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': 'Acp-Connection-Id, Acp-Session-Id', Vary: 'Origin' };
  }

  /** True once the response is complete or the client went away: nothing more may be written. */
  get ended(): boolean {
    return this.aborted || this.finished;
  }

  /** Aborted when the client goes away. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort();
    }
    return this.controller.signal;
  }

  header(name: string): string | undefined {
    const value = this.headers[name.toLowerCase()];
    return value === undefined || value === '' ? undefined : value;
  }

  /** Whether the request says a body follows: a Content-Length over 0, or a Transfer-Encoding (chunked). */
  get declaresBody(): boolean {
    return Number(this.header('content-length') ?? '0') > 0 || this.header('transfer-encoding') !== undefined;
  }

  /**
   * Answers 415 a request whose body troupe would read as JSON but whose Content-Type is not JSON
   * ({@link isJsonContentType}), before a byte of the body is read; true when it answered.
   * `always`: the media type is checked even when no body is declared (`POST /acp`, as the SDK
   * server checks it); otherwise only a request that declares a body is checked (the /v1 routes,
   * which also take none). Until 2026-12-07 the whole body was read first (up to the size limit),
   * and the 415 came only once the client had sent all of it.
   */
  refuseNonJsonBody(always: boolean): boolean {
    if (isJsonContentType(this.header('content-type'))) return false;
    if (!always && !this.declaresBody) return false;
    // The body is never read: as after a 413, the connection closes once the answer is out, so that
    // its bytes are neither buffered nor taken for the next request.
    this.errorAndClose(415, 'invalid_request', 'Unsupported Media Type: use application/json', this.declaresBody);
    return true;
  }

  onAbort(fn: () => void): void {
    if (this.aborted) fn();
    else this.abortHandlers.push(fn);
  }

  /**
   * Reads the whole body, refusing more than `limit` bytes: first by Content-Length, then while it
   * streams in (a chunked body declares no length). Rejects with TroupeError payload_too_large.
   */
  readBody(limit: number): Promise<Buffer> {
    const declared = Number(this.header('content-length') ?? '0');
    if (Number.isFinite(declared) && declared > limit) return Promise.reject(payloadTooLarge(limit));
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let failed = false;
      this.onAbort(() => reject(new TroupeError('request_cancelled', 'Client went away while sending the body')));
      this.res.onData((chunk, isLast) => {
        if (failed) return;
        size += chunk.byteLength;
        this.meter.received += chunk.byteLength;
        if (size > limit) {
          failed = true;
          reject(payloadTooLarge(limit));
          return;
        }
        // uWS neuters the ArrayBuffer after this callback returns, so copy it.
        if (chunk.byteLength > 0) chunks.push(Buffer.from(chunk.slice(0)));
        if (isLast) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
      });
    });
  }

  /**
   * Sends a complete response. A no-op after abort or a previous end. A HEAD request (served by GET
   * routes) gets the headers and the length of the body but never the body: bytes after the headers
   * would be read as the start of the next response on a kept-alive connection.
   */
  send(status: number, headers: Record<string, string>, body: string | Buffer = '', closeConnection = false): void {
    if (this.ended) return;
    // A HEAD has no body to refuse: closeConnection (after an oversized body) never applies to one.
    if (this.method === 'HEAD') return this.endHead(status, headers, Buffer.byteLength(body));
    this.finished = true;
    const size = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    this.meter.sent += size;
    this.res.cork(() => {
      this.writeHead(status, headers);
      if (closeConnection) return void this.res.end(body, true);
      // Only as much as the socket takes now; the rest from onWritable. Until all of it is written
      // the response stays pending, and uWS closes a connection that sends a request behind a
      // pending response (it answers pipelined requests only in turn). With `end`, uWS kept every
      // byte the socket did not take and marked the response done: a client that pipelined requests
      // and read nothing had all their answers held (1,000,000 health checks, 36 MB sent, grew the
      // daemon by 184 MB until 2026-12-07; spec/transport.md §7).
      const [, done] = this.res.tryEnd(body, size);
      if (done) return;
      // The rest by byte offset: a string is made bytes only for an answer the socket did not take
      // whole (most are small, and every 202 goes this way).
      const bytes = typeof body === 'string' ? Buffer.from(body) : body;
      this.res.onWritable((offset) => this.res.tryEnd(bytes.subarray(offset), size)[0]);
    });
  }

  /**
   * Answers a HEAD: the headers GET would send, then nothing. `length` is the length of GET's body,
   * when it has one; a stream's has none, and no Content-Length is sent for it (a length of 0 would
   * say the GET's body is empty).
   */
  private endHead(status: number, headers: Record<string, string>, length: number | undefined): void {
    this.finished = true;
    this.res.cork(() => {
      this.writeHead(status, headers);
      // This uWS build mishandles endWithoutBody's arguments (a length aborts the process, an
      // undefined one is sent as 2^63), so a length goes as a header; with no argument it adds none.
      if (length !== undefined) this.res.writeHeader('Content-Length', String(length));
      this.res.endWithoutBody();
    });
  }

  json(status: number, value: unknown, headers: Record<string, string> = {}): void {
    this.send(status, { 'Content-Type': 'application/json', ...headers }, JSON.stringify(value));
  }

  /** A non-JSON-RPC error: `{ error: { code, message, data? } }` with a stable string code. */
  error(status: number, code: ErrorCode, message: string, data?: Record<string, unknown>, headers: Record<string, string> = {}): void {
    this.json(status, { error: { code, message, ...(data ? { data } : {}) } }, headers);
  }

  /**
   * A non-JSON-RPC error like {@link error}, and the connection closed once it is out when
   * `closeConnection`: after a refused body, whose unread rest must not stay on the connection.
   */
  errorAndClose(status: number, code: ErrorCode, message: string, closeConnection = true): void {
    this.send(status, { 'Content-Type': 'application/json' }, JSON.stringify({ error: { code, message } }), closeConnection);
  }

  /** Sends a TroupeError (its table status) or, for anything else, a 500 internal_error. */
  fail(err: unknown): void {
    if (err instanceof TroupeError) {
      const data = Object.keys(err.data).length > 0 ? err.data : undefined;
      this.error(ERROR_CODES[err.code].http, err.code, err.message, data);
    } else {
      this.error(500, 'internal_error', 'Internal error');
    }
  }

  /**
   * Starts a streamed (chunked) SSE response: status and headers go out with `first`. Every later
   * write must be whole SSE lines, because draining writes an SSE comment between them.
   */
  startEventStream(status: number, headers: Record<string, string>, first: string): boolean {
    if (this.ended) return false;
    // HEAD: the headers only, and the response is complete (the stream's owner sees `ended`).
    if (this.method === 'HEAD') {
      this.endHead(status, headers, undefined);
      return false;
    }
    this.streaming = true;
    this.meter.sent += Buffer.byteLength(first);
    let ok = true;
    this.res.cork(() => {
      this.writeHead(status, headers);
      ok = this.res.write(first);
    });
    // With an onWritable handler installed uWS does not drain its buffer by itself; the handler must
    // write. Writing an SSE comment drains it when the stream has nothing else to say.
    this.res.onWritable(() => {
      this.meter.sent += 2;
      if (!this.res.write(':\n')) return false;
      this.drainHandler?.();
      return true;
    });
    return ok;
  }

  /** Status and headers (inside a cork). */
  private writeHead(status: number, headers: Record<string, string>): void {
    this.res.writeStatus(statusLine(status));
    for (const [k, v] of Object.entries(headers)) this.res.writeHeader(k, v);
    if (this.crossOrigin) for (const [k, v] of Object.entries(this.crossOrigin)) this.res.writeHeader(k, v);
  }

  /** Writes a chunk of a streamed response; false means it was buffered (wait for drain). */
  write(chunk: string): boolean {
    if (this.ended) return false;
    this.meter.sent += Buffer.byteLength(chunk);
    return this.res.write(chunk);
  }

  /** Called when the socket can take more after a write returned false. */
  onDrain(fn: () => void): void {
    this.drainHandler = fn;
  }

  /** Runs `fn` corked, so several writes leave in one syscall. */
  cork(fn: () => void): void {
    if (this.ended) return;
    this.res.cork(fn);
  }

  /** Ends a streamed response. */
  endStream(): void {
    if (this.ended) return;
    this.finished = true;
    this.res.cork(() => this.res.end());
  }

  /** Closes the socket at once (used when a stream must stop and its client is not reading). */
  destroy(): void {
    if (this.ended) return;
    this.finished = true;
    this.res.close();
  }
}

/**
 * A request's headers, names in lower case. A header on several lines folds into one value, as
 * RFC 9110 §5.3 reads it: Cookie pairs joined by '; ', the rest by ', ' (a list such as
 * Sec-WebSocket-Protocol may come one item a line, RFC 6455 §11.3.4).
 */
export function readHeaders(req: HttpRequest): HeaderMap {
  const headers: Record<string, string> = {};
  req.forEach((key, value) => {
    headers[key] = key in headers ? `${headers[key]}${key === 'cookie' ? '; ' : ', '}${value}` : value;
  });
  return headers;
}

const UTF8 = new TextDecoder('utf-8');

/**
 * A JSON body's text, decoded as the SDK's server decodes it (fetch's `Request.json()` on HTTP, a
 * `TextDecoder` on WebSocket): a leading byte order mark is dropped (RFC 8259 §8.1 lets a reader
 * ignore it), invalid bytes become U+FFFD. `Buffer#toString` keeps the mark, which JSON.parse
 * refuses: until 2026-12-07 a body saved with one (Windows editors write it) was 400 `parse_error`
 * here and taken by the SDK server.
 */
export function jsonText(bytes: Uint8Array | ArrayBuffer): string {
  return UTF8.decode(bytes);
}

/**
 * Whether a Content-Type names JSON, the one test of it for /acp and the /v1 routes, as the SDK
 * server makes it: the media type before any `;`, trimmed and compared case-insensitively with
 * `application/json` exactly (`application/jsonx`, `application/json-seq`, `text/json` are not).
 * Parameters are ignored, `charset` included: RFC 8259 §11 defines none for application/json and
 * says adding one has no effect, and the body is read as UTF-8 whatever it says (as the SDK does).
 */
export function isJsonContentType(value: string | undefined): boolean {
  return value?.split(';', 1)[0]?.trim().toLowerCase() === 'application/json';
}
