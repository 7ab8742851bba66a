/**
 * The daemon's HTTP server on uWebSockets.js: security on every route, the ACP transport at `/acp`
 * (HTTP + WebSocket), JSON/SSE management routes under `/v1`, static files, TLS, graceful close.
 */
import { accessSync, constants } from 'node:fs';
import { ERROR_CODES, TroupeError } from '../../core/errors.js';
import { silentLogger, systemClock, type Clock, type Logger } from '../../core/ports.js';
import { acpWebSocketBehavior } from './acp/acp-ws.handler.js';
import { handleAcpHttp } from './acp/acp-http.handler.js';
import type { AcpAgentSide, AcpTransportOptions } from './acp/acp.types.js';
import { TransportCore, type AcpConnectionStats } from './acp/transport-core.js';
import { HttpExchange, jsonText, type ByteMeter } from './http-exchange.js';
import { MAX_JSON_DEPTH, nestedTooDeep } from './json-depth.js';
import { oneParam } from './query-param.js';
import { listenFailed } from './listen-failure.js';
import type { RouteHandler, RouteRequest, RouteResponse } from './route.types.js';
import { Router, routePath } from './router.js';
import { SESSION_COOKIE, Security, canonicalHost, isLoopbackHost } from './security.js';
import { REFUSAL_PAGE_HEADERS, refusalPage, wantsPage } from './refusal-page.js';
import { DEFAULT_MAX_SSE_STREAMS, SseStream } from './sse-stream.js';
import { staticFiles } from './static-files.js';
import { closeApp, uws, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from './uws.js';
import { headOf } from '../../core/text-cut.js';

export interface HttpServerOptions {
  /** The bearer token every route but `GET /v1/health` and `GET /v1/login` requires (≥ 16 chars). */
  token: string;
  /** Default 127.0.0.1. Anything not loopback logs a warning. */
  host?: string;
  /** Default 0: an ephemeral port, reported by `listen()`. */
  port?: number;
  /** PEM files; serve HTTPS/WSS through uWS SSLApp. */
  tls?: { certFile: string; keyFile: string; passphrase?: string };
  /** Origins (`scheme://host:port`) allowed besides the server's own. */
  allowOrigins?: readonly string[];
  /** Largest request body for `/v1` routes. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Management SSE: keep-alive after this much silence (default 15 s), and the buffer before `send` waits (default 1 MiB). */
  sseKeepAliveMs?: number;
  sseMaxBufferedBytes?: number;
  /**
   * Management SSE streams open at once (default 256): each holds a socket, a feed subscription and
   * up to `sseMaxBufferedBytes`, so one more is refused with 503 `capacity_exceeded`.
   */
  maxSseStreams?: number;
  /** Lifetime of a one-time login code. Default 60 s. */
  loginCodeTtlMs?: number;
  logger?: Logger;
  clock?: Clock;
}

export interface ListenInfo {
  host: string;
  port: number;
  /** `http://127.0.0.1:PORT` (or https). */
  url: string;
}

/** Where the ACP transport can be observed (tests, metrics). */
export interface AcpTransportHandle {
  connections(): AcpConnectionStats[];
  /** Shuts one connection down as if DELETEd (the peer hears `deleted`); false if unknown. */
  closeConnection(id: string): boolean;
  /** Bytes all connections keep for `Last-Event-ID` resume (within `retainTotalBytes`). */
  retainedBytes(): number;
  /** Bytes of output no client has taken yet, over all connections (within `maxBufferedTotalBytes`). */
  unsentBytes(): number;
  /** Body bytes received and sent on /acp, by transport (HTTP bodies and SSE streams; WebSocket frames). */
  traffic(): { http: ByteMeter; ws: ByteMeter };
  readonly options: TransportCore['options'];
}

// A HEAD of the login link is answered 405 without the token, as its GET would be served: a
// link checker or a chat client's preview that sends HEAD never spends the code (its GET does).
const OPEN_ROUTES = new Set(['GET /v1/health', 'HEAD /v1/health', 'GET /v1/login', 'HEAD /v1/login']);
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/**
 * The longest request target (path and query) a route is given. No route takes anything near this
 * (session ids are at most 1024 characters, as on the ACP transport), and errors name what they
 * refused: a longer target would only be echoed back in them.
 */
export const MAX_TARGET_CHARS = 8192;

export class HttpServer {
  private readonly app: TemplatedApp;
  private readonly router = new Router<RouteHandler>();
  private readonly security: Security;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly sseStreams = new Set<SseStream>();
  private acpCore: TransportCore | undefined;
  /** Body bytes of every route but /acp: the management API, /metrics, the inspector (`troupe_management_bytes_total`). */
  readonly managementBytes: ByteMeter = { received: 0, sent: 0 };
  private listenSocket: us_listen_socket | undefined;
  private info: ListenInfo | undefined;
  private listening = false;

  constructor(private readonly options: HttpServerOptions) {
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? systemClock;
    this.security = new Security({ token: options.token, allowOrigins: options.allowOrigins, loginCodeTtlMs: options.loginCodeTtlMs, clock: this.clock });
    if (options.tls) {
      const { certFile, keyFile, passphrase } = options.tls;
      // One line with a code, as for a port in use: uWS only says 'App construction failed'.
      const tlsFailed = (why: string, reason: string) => new TroupeError('listen_failed', `cannot serve HTTPS with the certificate ${certFile} and the key ${keyFile}: ${why}`, { reason, certFile, keyFile });
      for (const f of [certFile, keyFile]) {
        try {
          accessSync(f, constants.R_OK);
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code ?? 'EACCES';
          throw tlsFailed(`cannot read ${f} (${code})`, code);
        }
      }
      try {
        this.app = uws.SSLApp({ cert_file_name: certFile, key_file_name: keyFile, ...(passphrase ? { passphrase } : {}) });
      } catch {
        throw tlsFailed('they are not a PEM certificate and its private key', 'tls');
      }
    } else {
      this.app = uws.App();
    }
    this.route('GET', '/v1/health', () => ({ status: 'ok' }));
    // Not HEAD: its GET spends the one-time code (until 2026-12-07 a HEAD with the token spent it,
    // and one without was refused 401, as no GET of the link is).
    this.router.add('GET', '/v1/login', (req, res) => this.login(req, res), { head: false });
  }

  /**
   * Registers a JSON/SSE route, e.g. `route('GET', '/v1/sessions/:id', handler)`. Registering the
   * same method and pattern again replaces the handler. Every route but the open ones needs the token.
   */
  route(method: string, pattern: string, handler: RouteHandler): this {
    if (pattern === '/acp' || pattern.startsWith('/acp/')) throw new Error('/acp belongs to the ACP transport');
    this.router.add(method, pattern, handler);
    return this;
  }

  /** Serves the files of `dir` under `prefix` (e.g. `/inspect`); `/inspect` redirects to `/inspect/`. */
  serveStatic(prefix: string, dir: string): this {
    const clean = prefix.replace(/\/+$/, '');
    const files = staticFiles(dir);
    // `/inspect` and `/inspect/` split alike; relative asset URLs need the slash, so redirect.
    this.router.add('GET', `${clean}/*`, (req, res) => (req.path === clean ? res.redirect(`${clean}/`, 302) : files(req, res)));
    return this;
  }

  /** Mounts the ACP transport (Streamable HTTP + WebSocket) at `/acp`. Call before `listen()`. */
  mountAcp(agent: AcpAgentSide, options?: AcpTransportOptions): AcpTransportHandle {
    if (this.acpCore) throw new Error('the ACP transport is already mounted');
    if (this.listening) throw new Error('mount the ACP transport before listen()');
    const core = new TransportCore(agent, options, this.logger, this.clock);
    this.acpCore = core;
    this.app.ws(
      '/acp',
      acpWebSocketBehavior(core, {
        authorize: (headers, protocols) => this.security.check(headers, true, protocols),
        tokenSubprotocol: (offered) => this.security.tokenSubprotocol(offered),
      }),
    );
    return {
      connections: () => core.stats(),
      closeConnection: (id) => {
        const conn = core.connection(id);
        conn?.shutdown('deleted');
        return conn !== undefined;
      },
      retainedBytes: () => core.retained,
      traffic: () => core.traffic,
      unsentBytes: () => core.unsent,
      options: core.options,
    };
  }

  /** Open management SSE streams and the bytes they hold waiting for their sockets (for /metrics). */
  sseStats(): { streams: number; queuedBytes: number } {
    let queuedBytes = 0;
    for (const s of this.sseStreams) queuedBytes += s.queued;
    return { streams: this.sseStreams.size, queuedBytes };
  }

  /** Mints a one-time login code and the URL that spends it (sets the cookie, redirects to /inspect/). */
  mintLoginCode(): { code: string; url: string } {
    const code = this.security.mintLoginCode();
    return { code, url: `${this.info?.url ?? ''}/v1/login?code=${encodeURIComponent(code)}` };
  }

  listen(): Promise<ListenInfo> {
    if (this.info || this.listening) return Promise.reject(new Error('the server is already listening'));
    this.listening = true;
    // As an address is written (`127.1` is 127.0.0.1, `0` is 0.0.0.0): for the warning, the URL and the Origin check alike.
    const host = canonicalHost(this.options.host ?? '127.0.0.1');
    const port = this.options.port ?? 0;
    if (!isLoopbackHost(host)) this.logger.warn(`Listening on non-loopback host ${host}: anyone who can reach it and holds the token can drive sessions`, { host });
    this.app.any('/*', (res, req) => this.dispatch(res, req));
    return new Promise((resolve, reject) => {
      this.app.listen(host, port, (socket) => {
        if (!socket) return void listenFailed(host, port).then(reject);
        this.listenSocket = socket;
        const actual = uws.us_socket_local_port(socket as never);
        this.security.setOwnAddress(host, actual);
        // A wildcard bind is reached locally through loopback.
        const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
        const urlHost = reachable.includes(':') && !reachable.startsWith('[') ? `[${reachable}]` : reachable;
        this.info = { host, port: actual, url: `${this.options.tls ? 'https' : 'http'}://${urlHost}:${actual}` };
        resolve(this.info);
      });
    });
  }

  get url(): string {
    if (!this.info) throw new Error('the server is not listening');
    return this.info.url;
  }

  /** Stops listening, ends every ACP connection and SSE stream, then closes every socket. */
  async close(): Promise<void> {
    this.acpCore?.closeAll();
    for (const s of [...this.sseStreams]) s.close();
    if (this.listenSocket) uws.us_listen_socket_close(this.listenSocket);
    this.listenSocket = undefined;
    // Let ended responses flush before the sockets go.
    await new Promise((r) => setTimeout(r, 10));
    closeApp(this.app);
  }

  private dispatch(res: HttpResponse, req: HttpRequest): void {
    // The meter is chosen from the URL before the exchange copies it out of uWS's request.
    const ex = new HttpExchange(res, req, req.getUrl() === '/acp' && this.acpCore ? this.acpCore.traffic.http : this.managementBytes);
    try {
      // Before anything reads the body, whose end is not known. Closed without an answer, as uWS closes
      // for the framing errors it finds itself (a Content-Length with both Transfer-Encoding, or
      // negative, or of 10 digits): uWS goes on parsing what follows this request in the same read,
      // and an answer ended with `close` closes nothing until then (measured: the bytes past the first
      // length were answered as a request of their own); only a close made here stops it.
      if (ambiguousLength(ex.header('content-length'))) {
        this.logger.warn('Closing an HTTP connection whose request has a Content-Length with differing values', { path: ex.path, contentLength: headOf(ex.header('content-length')!, 80) });
        return ex.destroy();
      }
      const crossOrigin = this.security.crossOrigin(ex.header('origin'));
      if (crossOrigin) {
        ex.allowCrossOrigin(crossOrigin);
        // The browser's preflight carries no credentials: it asks whether the real request may come.
        if (ex.method === 'OPTIONS' && ex.header('access-control-request-method')) return preflight(ex);
      }
      if (ex.path === '/acp') {
        const auth = this.security.check(ex.headers, true);
        if (!auth.ok) return ex.error(auth.status, auth.code, auth.message);
        if (!this.acpCore) return ex.error(404, 'method_not_found', 'The ACP transport is not mounted');
        return handleAcpHttp(ex, this.acpCore);
      }
      // Read as the router reads it: until 2026-12-07 `/v1/health/` reached the health route and
      // was refused without the token (a health check written with a trailing slash got 401).
      const auth = this.security.check(ex.headers, !OPEN_ROUTES.has(`${ex.method} ${routePath(ex.path)}`));
      if (!auth.ok) return wantsPage(ex.headers) ? ex.send(auth.status, REFUSAL_PAGE_HEADERS, refusalPage(auth.status, auth.code, auth.message)) : ex.error(auth.status, auth.code, auth.message);
      const target = ex.path.length + ex.rawQuery.length;
      if (target > MAX_TARGET_CHARS) return ex.error(414, 'invalid_request', `URI Too Long: the request target is ${target} characters, over ${MAX_TARGET_CHARS}`);
      const match = this.router.match(ex.method, ex.path);
      if (match.kind === 'not_found') return ex.error(404, 'method_not_found', `No route for ${ex.method} ${ex.path}`);
      if (match.kind === 'method_not_allowed') return ex.error(405, 'invalid_request', 'Method Not Allowed', undefined, { Allow: match.allow.join(', ') });
      void this.runRoute(ex, match.handler, match.params);
    } catch (err) {
      this.logger.error('HTTP dispatch failed', { error: String(err) });
      ex.fail(err);
    }
  }

  private async runRoute(ex: HttpExchange, handler: RouteHandler, params: Record<string, string>): Promise<void> {
    const hasBody = BODY_METHODS.has(ex.method) && ex.declaresBody;
    // The API speaks JSON: another body (curl -d sends a form type) is refused as /acp refuses it,
    // rather than reach the handler as no body at all, and before it is read.
    if (hasBody && ex.refuseNonJsonBody(false)) return;
    // The body must be attached for before the uWS callback returns.
    const bodyRead = hasBody ? ex.readBody(this.options.maxBodyBytes ?? 1024 * 1024) : undefined;
    try {
      const rawBody = bodyRead ? await bodyRead : undefined;
      let body: unknown;
      if (rawBody && rawBody.length > 0) {
        try {
          body = JSON.parse(jsonText(rawBody));
        } catch {
          return ex.error(400, 'parse_error', 'The request body is not valid JSON');
        }
        if (nestedTooDeep(body)) return ex.error(400, 'invalid_request', `JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
      }
      const request: RouteRequest = { method: ex.method, path: ex.path, params, query: new URLSearchParams(ex.rawQuery), headers: ex.headers, body, rawBody, signal: ex.signal };
      const result = await handler(request, this.responseFor(ex));
      if (ex.ended || ex.streaming) return;
      if (result === undefined) ex.send(204, {});
      else ex.json(200, result);
    } catch (err) {
      if (err instanceof TroupeError && err.code === 'payload_too_large') {
        return ex.errorAndClose(413, err.code, err.message);
      }
      if (!(err instanceof TroupeError)) this.logger.error('Route handler failed', { path: ex.path, error: err instanceof Error ? err.stack ?? err.message : String(err) });
      if (ex.streaming) ex.destroy();
      else ex.fail(err);
    }
  }

  private responseFor(ex: HttpExchange): RouteResponse {
    return {
      get sent() {
        return ex.ended || ex.streaming;
      },
      json: (status, value, headers) => ex.json(status, value, headers),
      error: (status, code, message, data) => ex.error(status, code, message, data),
      send: (status, headers, body) => ex.send(status, headers, body),
      redirect: (location, status = 303) => ex.send(status, { Location: location }),
      sse: (headers) => {
        const max = this.options.maxSseStreams ?? DEFAULT_MAX_SSE_STREAMS;
        if (this.sseStreams.size >= max) throw new TroupeError('capacity_exceeded', `The daemon holds its maximum of ${max} event streams (--max-streams)`, { limit: max });
        const stream = new SseStream(ex, { keepAliveMs: this.options.sseKeepAliveMs ?? 15_000, maxBufferedBytes: this.options.sseMaxBufferedBytes ?? 1024 * 1024 }, headers);
        this.sseStreams.add(stream);
        stream.onClose(() => this.sseStreams.delete(stream));
        return stream;
      },
    };
  }

  private login(req: RouteRequest, res: RouteResponse): void {
    // Opened in a browser (the URL `troupe inspect --url` printed), a refusal is a page saying what to do.
    const refuse = (status: number, code: 'invalid_request' | 'forbidden', message: string) =>
      wantsPage(req.headers) ? res.send(status, REFUSAL_PAGE_HEADERS, refusalPage(status, code, message)) : res.error(status, code, message);
    // Two codes say nothing about which was meant, as for every query parameter (spec/daemon.md
    // §Management API): until 2026-12-07 the first was spent.
    const code = oneParam(req.query, 'code');
    if (!code) return refuse(400, 'invalid_request', 'Missing login code');
    const cookie = this.security.redeemLoginCode(code);
    if (!cookie) return refuse(403, 'forbidden', 'The login code is unknown, used or expired');
    const secure = this.options.tls ? '; Secure' : '';
    res.send(303, { Location: '/inspect/', 'Set-Cookie': `${SESSION_COOKIE}=${cookie}; HttpOnly; SameSite=Strict; Path=/${secure}`, 'Cache-Control': 'no-store' });
  }
}

/**
 * A Content-Length sent on several lines with differing values (folded into one list by
 * HttpExchange). uWS frames the body by the first line and reads what follows as the next request;
 * a proxy in front that framed it by another line would forward a request the daemon then runs
 * unseen (request smuggling). RFC 9112 §6.3: the framing is invalid, the connection must close
 * (with a 400 it asks for, which uWS leaves no way to send first: see dispatch). Equal values are
 * one length (RFC 9110 §8.6). Until 2026-12-07 such a request was served, and the bytes past the
 * first length answered as a request of their own.
 */
function ambiguousLength(value: string | undefined): boolean {
  if (value === undefined || !value.includes(',')) return false;
  const [first, ...rest] = value.split(',').map((v) => v.trim());
  return rest.some((v) => v !== first);
}

/**
 * The answer to a CORS preflight from an allowed origin: the methods the routes take, and the
 * headers the page asked to send (an allowed origin is trusted with the token; which headers it may
 * send is no security boundary). Cached by the browser for 10 minutes.
 */
function preflight(ex: HttpExchange): void {
  ex.send(204, {
    'Access-Control-Allow-Methods': 'GET, HEAD, POST, DELETE',
    'Access-Control-Allow-Headers': ex.header('access-control-request-headers') ?? '',
    'Access-Control-Max-Age': '600',
  });
}

/** The HTTP status of a stable error code (re-exported for route authors). */
export function httpStatusOf(code: keyof typeof ERROR_CODES): number {
  return ERROR_CODES[code].http;
}
