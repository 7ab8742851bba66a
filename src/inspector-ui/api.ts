/**
 * The page's link to the daemon: JSON requests and SSE subscriptions. Authentication is the
 * HttpOnly login cookie, sent by the browser on every same-origin request.
 */

/** A refused request: its HTTP status and the error code of the daemon's body, if any. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    path: string,
  ) {
    super(`${path}: ${status}${code ? ` ${code}` : ''}`);
  }
}

export async function getJson<T>(path: string): Promise<T> {
  const res = await fetch(path, { credentials: 'same-origin', headers: { accept: 'application/json' } });
  if (!res.ok) {
    const body = (await res.json().catch(() => undefined)) as { error?: { code?: string } } | undefined;
    throw new HttpError(res.status, body?.error?.code, path);
  }
  return (await res.json()) as T;
}

export interface FeedHandlers {
  /** A named SSE event with its parsed data and `id:` (if any). */
  message(event: string, data: unknown, id: string): void;
  /**
   * The connection state changed: `live` once open, `down` while the browser reconnects, `ended`
   * when the daemon refused the stream (`status`: 401/403 the login is gone, e.g. the daemon
   * restarted; 404 the session was deleted): retrying could never succeed, so the feed stops.
   */
  status(state: 'live' | 'down' | 'ended', status?: number): void;
  /**
   * The daemon ended the stream with `event: error` `{code, message}` (a session's log damaged
   * mid-read: `log_corrupt`): a reconnect would meet the same error, so the feed has stopped.
   */
  failed(error: { code: string; message: string }): void;
}

/**
 * An SSE subscription that survives reconnects. The browser's EventSource resends the last `id:`
 * as `Last-Event-ID` when it reconnects on its own; when the server ends a stream (or `restart()`
 * is called) a new EventSource starts with `?after=<last id>`, so nothing is read twice or missed.
 * A stream the daemon ends with `event: error` is not reconnected (`failed`).
 */
export class Feed {
  private source: EventSource | undefined;
  private lastId = '';
  private closed = false;
  private retry: number | undefined;

  constructor(
    private readonly url: (after: string) => string,
    private readonly events: string[],
    private readonly handlers: FeedHandlers,
    after = '',
  ) {
    this.lastId = after;
    this.open();
  }

  get cursor(): string {
    return this.lastId;
  }

  /** Closed, by the page or because the daemon refused the stream for good. */
  get ended(): boolean {
    return this.closed;
  }

  /** Drops the connection and resumes from the last id seen (the way a network blip would). */
  restart(): void {
    if (this.closed) return;
    this.source?.close();
    this.handlers.status('down');
    this.open();
  }

  /** Disconnects, keeping the cursor; `resume()` reconnects from it (Last-Event-ID semantics). */
  pause(): void {
    if (this.closed) return;
    this.source?.close();
    this.source = undefined;
    this.handlers.status('down');
  }

  resume(): void {
    if (!this.source) this.open();
  }

  close(): void {
    this.closed = true;
    window.clearTimeout(this.retry);
    this.source?.close();
  }

  private async reopenUnlessRefused(source: EventSource): Promise<void> {
    const status = await fetch(this.url(this.lastId), { method: 'HEAD', credentials: 'same-origin' }).then(
      (r) => r.status,
      () => 0,
    );
    if (this.closed || this.source !== source) return;
    if (status >= 400 && status < 500) {
      this.close();
      this.handlers.status('ended', status);
      return;
    }
    this.retry = window.setTimeout(() => this.open(), 1000);
  }

  private open(): void {
    if (this.closed) return;
    const source = new EventSource(this.url(this.lastId), { withCredentials: true });
    this.source = source;
    source.onopen = () => this.handlers.status('live');
    source.onerror = (ev) => {
      // The daemon's own `event: error` is dispatched under the same name: it is handled below.
      if (ev instanceof MessageEvent) return;
      this.handlers.status('down');
      // CLOSED means the browser gave up (e.g. the stream ended with an error status): reopen
      // ourselves, unless the daemon refuses it for good. EventSource does not say which status it
      // got, so ask (HEAD answers an SSE route's status without a stream, spec/daemon.md).
      if (source.readyState === EventSource.CLOSED && !this.closed) void this.reopenUnlessRefused(source);
    };
    // Until 2026-12-06 nothing listened for it: the browser reconnected when the stream ended, met
    // the same error, and so on for as long as the page was open, with nothing said. Only the
    // server's event carries data; the connection's own errors are plain Events (onerror's).
    source.addEventListener('error', (ev) => {
      if (!(ev instanceof MessageEvent) || this.closed || this.source !== source) return;
      let data: { code?: unknown; message?: unknown } = {};
      try {
        data = JSON.parse(String(ev.data)) as typeof data;
      } catch {
        // not JSON: said as it is
        data = { message: String(ev.data) };
      }
      this.close();
      this.handlers.failed({ code: typeof data.code === 'string' ? data.code : 'internal_error', message: typeof data.message === 'string' ? data.message : '' });
    });
    for (const name of this.events) {
      source.addEventListener(name, (ev) => {
        const m = ev as MessageEvent<string>;
        if (m.lastEventId) this.lastId = m.lastEventId;
        let data: unknown;
        try {
          data = JSON.parse(m.data);
        } catch {
          data = m.data;
        }
        this.handlers.message(name, data, m.lastEventId);
      });
    }
  }
}
