/**
 * A tiny path router: `/v1/sessions/:id` captures a segment, a trailing `*` captures the rest.
 * uWS has its own router, but routes registered after listen and 405-with-Allow need our own table.
 */

export type RouteParams = Record<string, string>;

interface Entry<H> {
  method: string;
  segments: string[];
  handler: H;
  /** A GET route serves HEAD too, unless its GET does something HEAD must not (spend a login code). */
  head: boolean;
}

export type RouteMatch<H> =
  | { kind: 'found'; handler: H; params: RouteParams }
  | { kind: 'method_not_allowed'; allow: string[] }
  | { kind: 'not_found' };

export class Router<H> {
  private readonly entries: Entry<H>[] = [];

  /**
   * Registers `handler` for `method` (upper case, or `*` for any) and `pattern`. Registering the
   * same method and pattern again replaces the earlier handler (so defaults can be overridden).
   * `head: false` keeps HEAD off a GET route whose GET is not safe to run for a HEAD (405 instead).
   */
  add(method: string, pattern: string, handler: H, { head = true }: { head?: boolean } = {}): void {
    if (!pattern.startsWith('/')) throw new Error(`route pattern must start with '/': ${pattern}`);
    const entry = { method: method.toUpperCase(), segments: split(pattern), handler, head };
    const same = this.entries.findIndex((e) => e.method === entry.method && e.segments.join('/') === entry.segments.join('/'));
    if (same >= 0) this.entries[same] = entry;
    else this.entries.push(entry);
  }

  match(method: string, path: string): RouteMatch<H> {
    const parts = split(path);
    const allow = new Set<string>();
    for (const entry of this.entries) {
      const params = matchSegments(entry.segments, parts);
      if (!params) continue;
      if (entry.method === '*' || entry.method === method) return { kind: 'found', handler: entry.handler, params };
      allow.add(entry.method);
      // HEAD is served by a GET route (and so named in a 405's Allow with it).
      if (entry.method !== 'GET' || !entry.head) continue;
      allow.add('HEAD');
      if (method === 'HEAD') return { kind: 'found', handler: entry.handler, params };
    }
    return allow.size > 0 ? { kind: 'method_not_allowed', allow: [...allow] } : { kind: 'not_found' };
  }
}

/**
 * The path as the router reads it: empty segments dropped (`/v1/health/` and `/v1//health` reach
 * `/v1/health`'s handler). What decides a route's treatment (its auth) reads the same path.
 */
export function routePath(path: string): string {
  return `/${split(path).join('/')}`;
}

function split(path: string): string[] {
  return path.split('/').filter((s) => s.length > 0);
}

function matchSegments(pattern: string[], parts: string[]): RouteParams | undefined {
  const params: RouteParams = {};
  for (let i = 0; i < pattern.length; i++) {
    const seg = pattern[i]!;
    if (seg === '*' && i === pattern.length - 1) {
      params['*'] = parts.slice(i).map(safeDecode).join('/');
      return params;
    }
    const part = parts[i];
    if (part === undefined) return undefined;
    if (seg.startsWith(':')) params[seg.slice(1)] = safeDecode(part);
    else if (seg !== part) return undefined;
  }
  return parts.length === pattern.length ? params : undefined;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
