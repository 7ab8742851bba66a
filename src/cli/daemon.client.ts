/**
 * The management API client (spec/daemon.md §Management API): JSON over HTTP with the bearer token,
 * errors mapped to one clear TroupeError or CliError, and the event-log SSE stream as an async
 * iterator.
 */
import { ERROR_CODES, TroupeError, type ErrorCode } from '../core/errors.js';
import { isValidSessionId } from '../core/ids.js';
import { CliError } from './cli-io.js';
import { readSse, type SseMessage } from './sse.reader.js';
import type { SessionEntry } from '../store/session-summary.js';
import { headOf } from '../core/text-cut.js';

/**
 * The management API path of session `id`. An id no session can have is unknown here, as the agent
 * says of it (session_not_found): `..` or `.` would be a dot segment that fetch resolves away, so
 * `troupe watch ..` asked for /v1/ and said "No route for GET /v1/ (method_not_found)" (until
 * 2026-12-06; `%2e%2e` too, which URLs read as `..`).
 */
export function sessionPath(id: string): string {
  if (!isValidSessionId(id)) throw new TroupeError('session_not_found', `no session ${id}`, { sessionId: id });
  return `/v1/sessions/${id}`;
}

/** Where a daemon is and how to talk to it. */
export interface DaemonTarget {
  url: string;
  token: string;
  /** Set for TROUPE_URL targets: never started or stopped by this CLI. */
  remote: boolean;
  /** Set for the private daemon of --standalone, stopped when the command ends. */
  standalone?: boolean;
}

export interface Health {
  version: string;
  uptimeMs: number;
  sessions: { live: number; total: number };
}

/** A session as GET /v1/sessions lists it. */
export interface SessionSummary extends SessionEntry {
  /** `restarts`: processes started after a crash or hang; `wakes`: after an idle stop (planned). */
  child: { state: string; pid: number | null; restarts: number; wakes: number } | null;
  connections: number;
  /** A process runs the session or is being started for it (what /v1/health counts as live). */
  live: boolean;
}

export interface SessionDetail extends SessionSummary {
  /** The running turn, when one runs. */
  turnId?: string;
  machines: Record<string, unknown>;
  transitions: { machine: string; state: string; event: string; at: number }[];
}

/** OpenSSL's and Node's codes for a server certificate this process does not trust or that names another host. */
const UNTRUSTED_CERTIFICATE = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/;

/**
 * The daemon answers with TLS, but this process does not trust its certificate (a daemon started
 * with a self-signed `--tls-cert`, say). Told apart from a daemon that is not there: saying "not
 * running" would send the user to start a second one, which the first one's lock refuses.
 */
export class UntrustedCertificateError extends CliError {
  constructor(
    readonly url: string,
    certificateCode: string,
  ) {
    super('daemon_unreachable', certificateProblem(url, certificateCode));
  }
}

/**
 * A certificate for another name is trusted, or would be: sending the user to NODE_EXTRA_CA_CERTS,
 * which they may have set already, does not help (until 2026-12-07 it was said for it too). The name
 * is what the URL reaches the daemon by: the daemon's --host, or TROUPE_URL.
 */
function certificateProblem(url: string, certificateCode: string): string {
  if (certificateCode === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    const host = new URL(url).hostname;
    return `the daemon at ${url} serves a TLS certificate that does not name ${host} (${certificateCode}): reach it by a name the certificate has (the daemon's --host, or TROUPE_URL), or make one with that name (a subjectAltName such as ${/^[\d.]+$|:/.test(host) ? `IP:${host.replace(/^\[|\]$/g, '')}` : `DNS:${host}`})`;
  }
  return `the daemon at ${url} serves a TLS certificate this process does not trust (${certificateCode}): run the CLI with NODE_EXTRA_CA_CERTS set to the daemon's --tls-cert file, or to its CA`;
}

function unreachable(url: string, err: unknown): CliError {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (typeof cause?.code === 'string' && UNTRUSTED_CERTIFICATE.test(cause.code)) return new UntrustedCertificateError(url, cause.code);
  const why = cause?.code ?? cause?.message ?? (err as Error).message;
  return new CliError('daemon_unreachable', `cannot reach the troupe daemon at ${url} (${why})`);
}

/** Errno and undici codes of a connection that could not be made, or broke. */
const TRANSPORT_CODE = /^(ECONNREFUSED|ECONNRESET|ECONNABORTED|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|UND_ERR_\w+)$/;
/**
 * What fetch (undici) and the ACP SDK's HTTP transport say when the connection fails: `fetch failed`
 * (nothing answered), `terminated` (a response body cut off: the daemon died mid-stream), and the
 * SDK's own `… SSE stream closed` / `ACP HTTP stream is closed`.
 */
const TRANSPORT_MESSAGE = /^(fetch failed|terminated|other side closed)$|SSE stream closed|HTTP stream is closed|ECONNREFUSED|ECONNRESET/i;

/**
 * The daemon went away under a command (stopped, restarted, killed; for a remote one, the network to
 * it failed too): one plain line of what happened and what to do, the same from run, chat, attach
 * and watch. The transport's own words (undici's `terminated`, `other side closed`, UND_ERR_SOCKET)
 * tell a user nothing: until 2026-12-07 run printed them (`lost the connection to the daemon at URL
 * (terminated: UND_ERR_SOCKET)`). They are the error's `cause`, which TROUPE_LOG=debug prints.
 */
export class DaemonGoneError extends CliError {
  constructor(target: DaemonTarget, cause?: unknown) {
    super('daemon_unreachable', daemonGoneLine(target));
    if (cause !== undefined) this.cause = cause;
  }
}

function daemonGoneLine(target: DaemonTarget): string {
  if (target.remote) return `lost the connection to the daemon at ${target.url}: it stopped, or the network to it failed`;
  // A standalone daemon's log went with its temporary home, and `troupe daemon start` starts another one.
  if (target.standalone) return `the standalone daemon at ${target.url} went away (it stopped or died)`;
  return `the daemon at ${target.url} went away (it stopped or died): 'troupe daemon start' starts it again, and 'troupe daemon logs' may say why it stopped`;
}

/**
 * The one place that decides whether `err` is the transport to the daemon failing (refused, reset,
 * cut off mid-stream) rather than an answer of the daemon: then a `daemon_unreachable` CliError
 * (DaemonGoneError), else undefined. An abort is never one: the caller's own (Ctrl-C, --no-follow
 * done) is not a failure, and a request's time limit is the caller's to word.
 */
export function transportFailure(err: unknown, target: DaemonTarget): CliError | undefined {
  if (err instanceof CliError) return err.code === 'daemon_unreachable' ? err : undefined;
  let e: unknown = err;
  for (let depth = 0; e instanceof Error && depth < 4; depth++, e = (e as { cause?: unknown }).cause) {
    if (e.name === 'AbortError' || e.name === 'TimeoutError') return undefined;
    const code = (e as { code?: unknown }).code;
    if ((typeof code === 'string' && TRANSPORT_CODE.test(code)) || TRANSPORT_MESSAGE.test(e.message)) return new DaemonGoneError(target, err);
  }
  return undefined;
}

/** Turns an error response body into a typed error with the daemon's own code and message. */
async function httpError(res: Response, url: string): Promise<Error> {
  const text = await res.text().catch(() => '');
  let code: string | undefined;
  let message = headOf(text, 200) || `HTTP ${res.status}`;
  let data: Record<string, unknown> = {};
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string; data?: Record<string, unknown> } };
    code = body.error?.code;
    message = body.error?.message ?? message;
    data = body.error?.data ?? {};
  } catch {
    // Not JSON: keep the text.
  }
  if (res.status === 401 || res.status === 403) {
    const c: ErrorCode = res.status === 401 ? 'unauthorized' : 'forbidden';
    return new TroupeError(c, `the daemon at ${url} refused the token: ${message} (check TROUPE_TOKEN or $TROUPE_HOME/token)`);
  }
  // Every error of a troupe daemon is a JSON body with a code (spec/errors.md): anything else is
  // another server at that URL (a wrong port in TROUPE_URL, a proxy), not a failure inside troupe.
  if (!code) {
    const path = res.url ? new URL(res.url).pathname : 'the request';
    return new CliError('daemon_unreachable', `the server at ${url} is not a troupe daemon: it answered HTTP ${res.status} to ${path}`);
  }
  if (code in ERROR_CODES) return new TroupeError(code as ErrorCode, message, data);
  return new TroupeError('internal_error', `the daemon answered HTTP ${res.status}: ${message}`);
}

export class DaemonClient {
  constructor(readonly target: DaemonTarget) {}

  private headers(json = false): Record<string, string> {
    return { Authorization: `Bearer ${this.target.token}`, ...(json ? { 'Content-Type': 'application/json' } : {}) };
  }

  /** One JSON request; `timeoutMs` bounds requests that should answer at once. */
  async request<T>(method: string, path: string, body?: unknown, timeoutMs = 30_000): Promise<T> {
    let res: Response;
    try {
      res = await fetch(this.target.url + path, {
        method,
        headers: this.headers(body !== undefined),
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw unreachable(this.target.url, err);
    }
    if (!res.ok) throw await httpError(res, this.target.url);
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      throw transportFailure(err, this.target) ?? err;
    }
    try {
      return JSON.parse(text) as T;
    } catch {
      // Another server at that URL that answers 200 to any path (a web app's dev server, a proxy's
      // page): until 2026-12-07 V8's words ("Unexpected token '<', "<!doctype "... is not valid
      // JSON"), with no code, from every command.
      const type = res.headers.get('content-type')?.split(';')[0]?.trim() || 'no content type';
      throw new CliError('daemon_unreachable', `the server at ${this.target.url} is not a troupe daemon: its answer to ${path.split('?')[0]} (HTTP ${res.status}, ${type}) is not JSON`);
    }
  }

  async health(timeoutMs = 2_000): Promise<Health> {
    const health = await this.request<Partial<Health> | null>('GET', '/v1/health', undefined, timeoutMs);
    // Every command asks this first: JSON that is not a troupe daemon's health (another JSON API at
    // that URL, `{}`) would otherwise reach them, which failed on it in V8's words ("Cannot read
    // properties of undefined (reading 'length')") or worse, went on (until 2026-12-07).
    if (typeof health?.version !== 'string') throw new CliError('daemon_unreachable', `the server at ${this.target.url} is not a troupe daemon: its answer to /v1/health has no version`);
    return health as Health;
  }

  async sessions(all: boolean): Promise<SessionSummary[]> {
    return (await this.request<{ sessions: SessionSummary[] }>('GET', `/v1/sessions${all ? '?all=1' : ''}`)).sessions;
  }

  session(id: string): Promise<SessionDetail> {
    return this.request<SessionDetail>('GET', sessionPath(id));
  }

  cancel(id: string): Promise<{ sessionId: string; cancelled: boolean }> {
    return this.request('POST', `${sessionPath(id)}/cancel`, {});
  }

  steer(id: string, expectedTurnId: string, text: string): Promise<{ steerId: string; turnId: string }> {
    return this.request('POST', `${sessionPath(id)}/steer`, { expectedTurnId, text });
  }

  revive(id: string): Promise<{ sessionId: string; revived: boolean }> {
    return this.request('POST', `${sessionPath(id)}/revive`, {});
  }

  remove(id: string): Promise<{ sessionId: string; deleted: boolean }> {
    return this.request('DELETE', sessionPath(id));
  }

  /** The session's event log after `after`, then live, as SSE messages (`event`, `id`, `data`). */
  async *events(id: string, after: number, signal: AbortSignal): AsyncGenerator<SseMessage> {
    let res: Response;
    try {
      res = await fetch(`${this.target.url}${sessionPath(id)}/events?after=${after}`, {
        headers: { ...this.headers(), Accept: 'text/event-stream' },
        signal,
      });
    } catch (err) {
      if (signal.aborted) return;
      throw unreachable(this.target.url, err);
    }
    if (!res.ok || !res.body) throw await httpError(res, this.target.url);
    try {
      yield* readSse(res.body, signal);
    } catch (err) {
      if (signal.aborted) return;
      // The daemon died mid-stream (undici's `terminated`), not an error of the stream's content.
      throw transportFailure(err, this.target) ?? err;
    }
  }
}
