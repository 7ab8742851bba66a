/**
 * Who may talk to the daemon: a bearer token (header, login cookie, or WebSocket subprotocol),
 * compared in constant time, and an Origin check against the server's own origin so that a web
 * page elsewhere cannot drive the daemon through a browser that holds the cookie.
 * spec/transport.md §8.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import type { Clock } from '../../core/ports.js';
import type { ErrorCode } from '../../core/errors.js';
import type { HeaderMap } from './http-exchange.js';

/** Name of the HttpOnly cookie set by `GET /v1/login`. */
export const SESSION_COOKIE = 'troupe_session';
/** A WebSocket subprotocol `troupe-token.<token>` carries the token for browsers. */
export const TOKEN_SUBPROTOCOL_PREFIX = 'troupe-token.';

export interface SecurityOptions {
  token: string;
  /** Extra origins (`scheme://host:port`) allowed besides the server's own. */
  allowOrigins?: readonly string[];
  /** How long a one-time login code stays valid. Default 60 s. */
  loginCodeTtlMs?: number;
  clock: Clock;
}

export type AuthOutcome = { ok: true } | { ok: false; status: 401 | 403; code: ErrorCode; message: string };

const MAX_COOKIE_SESSIONS = 256;

/** 127.0.0.0/8 and ::1; Node's BlockList also matches their IPv4-mapped IPv6 forms (::ffff:127.0.0.1). */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/**
 * A host as an address is written: IPv4 in its dotted four-part form, as the WHATWG URL parser and
 * getaddrinfo read it (`127.1` is 127.0.0.1, `0` is 0.0.0.0, `2130706433` is 127.0.0.1), IPv6
 * without brackets, a name lower-cased. What `--host` binds, the URL the daemon writes and the
 * Origin check all use this form: until 2026-12-07 `--host 0` bound every interface and wrote the
 * URL `http://0:PORT`, after which a browser's `http://127.0.0.1:PORT` was refused as foreign.
 */
export function canonicalHost(host: string): string {
  const bare = host.trim().replace(/^\[(.*)\]$/, '$1');
  if (isIP(bare) === 6) return bare.toLowerCase();
  try {
    return new URL(`http://${bare}`).hostname;
  } catch {
    return bare.toLowerCase();
  }
}

/** Whether `host` names this machine's loopback: `localhost`, 127.0.0.0/8 (in any form), ::1 or ::ffff:127.x.y.z. */
export function isLoopbackHost(host: string): boolean {
  const h = canonicalHost(host);
  if (h === 'localhost') return true;
  const family = isIP(h);
  return family !== 0 && LOOPBACK.check(h, family === 4 ? 'ipv4' : 'ipv6');
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

export class Security {
  private readonly tokenBytes: Buffer;
  private readonly allowOrigins: Set<string>;
  private readonly loginCodes = new Map<string, number>();
  /** Digests of cookie values handed out by login; the cookie never carries the token itself. */
  private readonly cookieSessions = new Set<string>();
  private ownHost = '127.0.0.1';
  private ownPort = 0;
  /** Whether a page on a loopback origin is this daemon's: it listens on loopback or on every interface. */
  private ownReachedByLoopback = true;

  constructor(private readonly options: SecurityOptions) {
    if (options.token.length < 16) throw new Error('the daemon token must be at least 16 characters');
    this.tokenBytes = Buffer.from(options.token, 'utf8');
    this.allowOrigins = new Set((options.allowOrigins ?? []).map(normalizeOrigin));
  }

  /** Tells the checker which host and port the server really listens on. */
  setOwnAddress(host: string, port: number): void {
    // Read once here, not for every request with an Origin.
    this.ownHost = canonicalHost(host);
    this.ownPort = port;
    this.ownReachedByLoopback = isLoopbackHost(this.ownHost) || isUnspecified(this.ownHost);
  }

  /**
   * Constant-time token check. Every request makes one, so the candidate's bytes are compared as
   * they are, not hashed first (a SHA-256 digest per request cost about 5 µs of the daemon's CPU
   * here). Only a candidate of the token's length is compared: that leaks the length, which is no
   * secret (43 characters for every token troupe makes).
   */
  tokenMatches(candidate: string): boolean {
    const bytes = Buffer.from(candidate, 'utf8');
    return bytes.length === this.tokenBytes.length && timingSafeEqual(bytes, this.tokenBytes);
  }

  /** The offered subprotocol `troupe-token.<token>` that carries this server's token, if one does. */
  tokenSubprotocol(offered: readonly string[]): string | undefined {
    return offered.find((p) => p.startsWith(TOKEN_SUBPROTOCOL_PREFIX) && this.tokenMatches(p.slice(TOKEN_SUBPROTOCOL_PREFIX.length)));
  }

  /**
   * Checks the Origin, then the credentials. `requireToken` is false for the routes open to anyone
   * who can reach the port (health, login).
   */
  check(headers: HeaderMap, requireToken: boolean, subprotocols: readonly string[] = []): AuthOutcome {
    const origin = headers['origin'];
    if (origin && !this.originAllowed(origin)) {
      return { ok: false, status: 403, code: 'forbidden', message: `Origin ${origin} is not allowed` };
    }
    if (!requireToken) return { ok: true };
    const presented = this.presentedCredentials(headers, subprotocols);
    if (presented.length === 0) return { ok: false, status: 401, code: 'unauthorized', message: 'A bearer token is required' };
    for (const cred of presented) {
      if (cred.kind === 'token' ? this.tokenMatches(cred.value) : this.cookieSessions.has(digest(cred.value).toString('hex'))) {
        return { ok: true };
      }
    }
    return { ok: false, status: 403, code: 'forbidden', message: 'The token is not accepted' };
  }

  /** Mints a one-time login code, valid once and for `loginCodeTtlMs`. */
  mintLoginCode(): string {
    const now = this.options.clock.now();
    for (const [code, expires] of this.loginCodes) if (expires <= now) this.loginCodes.delete(code);
    const code = randomBytes(24).toString('base64url');
    this.loginCodes.set(code, now + (this.options.loginCodeTtlMs ?? 60_000));
    return code;
  }

  /** Spends a login code; on success returns a fresh cookie value bound to this server. */
  redeemLoginCode(code: string): string | undefined {
    const expires = this.loginCodes.get(code);
    if (expires === undefined) return undefined;
    this.loginCodes.delete(code);
    if (expires <= this.options.clock.now()) return undefined;
    const value = randomBytes(32).toString('base64url');
    if (this.cookieSessions.size >= MAX_COOKIE_SESSIONS) {
      const oldest = this.cookieSessions.values().next().value;
      if (oldest !== undefined) this.cookieSessions.delete(oldest);
    }
    this.cookieSessions.add(digest(value).toString('hex'));
    return value;
  }

  /**
   * The origin of a request from a page allowed with `allowOrigins`, which the browser lets read the
   * response only under CORS headers (the server's own pages need none). Undefined otherwise.
   */
  crossOrigin(origin: string | undefined): string | undefined {
    return origin !== undefined && this.allowOrigins.has(normalizeOrigin(origin)) ? origin : undefined;
  }

  /** True for the server's own origin (http or https, loopback names equivalent) and allowed ones. */
  originAllowed(origin: string): boolean {
    const normalized = normalizeOrigin(origin);
    if (this.allowOrigins.has(normalized)) return true;
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return false;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    if (port !== this.ownPort) return false;
    const host = canonicalHost(url.hostname);
    if (host === this.ownHost) return true;
    return this.ownReachedByLoopback && isLoopbackHost(host);
  }

  private presentedCredentials(headers: HeaderMap, subprotocols: readonly string[]): Array<{ kind: 'token' | 'cookie'; value: string }> {
    const found: Array<{ kind: 'token' | 'cookie'; value: string }> = [];
    const auth = headers['authorization'];
    if (auth) {
      const m = /^Bearer\s+(.+)$/i.exec(auth.trim());
      found.push({ kind: 'token', value: m ? m[1]!.trim() : '' });
    }
    for (const p of subprotocols) {
      if (p.startsWith(TOKEN_SUBPROTOCOL_PREFIX)) found.push({ kind: 'token', value: p.slice(TOKEN_SUBPROTOCOL_PREFIX.length) });
    }
    const cookie = readCookie(headers['cookie'], SESSION_COOKIE);
    if (cookie) found.push({ kind: 'cookie', value: cookie });
    return found;
  }
}

/**
 * An `--allow-origin` value as the origin a browser sends (`URL.origin`: scheme and host in lower
 * case, an IDN host in punycode, no default port), or an Error saying why it is none. The Origin
 * header is matched against it exactly, so a value that is no origin (`*`, `localhost:3000`, a path
 * or a query after the host) can never match: until 2026-12-07 such a value was taken without a
 * word, and every request of the page it was meant for was refused 403.
 */
export function allowedOrigin(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  const origin = url && (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password && url.pathname === '/' && !/[?#]/.test(value) ? url.origin : undefined;
  if (origin === undefined) {
    const every = value.trim() === '*' ? ': every origin at once is not offered, name each one' : '';
    throw new Error(`--allow-origin takes an origin as a browser sends it, http(s)://host[:port] (e.g. http://localhost:3000), got '${value}'${every}`);
  }
  return origin;
}

function isUnspecified(host: string): boolean {
  const h = canonicalHost(host);
  return h === '0.0.0.0' || h === '::' || h === '::ffff:0.0.0.0';
}

function normalizeOrigin(origin: string): string {
  return origin.trim().replace(/\/+$/, '').toLowerCase();
}

/** The value of cookie `name` in a Cookie header, if present. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
