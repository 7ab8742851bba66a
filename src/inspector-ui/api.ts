/**
 * The page's link to the daemon: JSON requests and SSE subscriptions. Authentication is the
 * HttpOnly login cookie, sent by the browser on every same-origin request.
 */

export async function getJson<T>(path: string): Promise<T> {
  const res = await fetch(path, { credentials: 'same-origin', headers: { accept: 'application/json' } });
  if (!res.ok) throw new Error(`${path}: ${res.status}`);
  return (await res.json()) as T;
}

export interface FeedHandlers {
  /** A named SSE event with its parsed data and `id:` (if any). */
  message(event: string, data: unknown, id: string): void;
  /** The connection state changed: `live` once open, `down` while the browser reconnects. */
  status(state: 'live' | 'down'): void;
}

/**
 * An SSE subscription that survives reconnects. The browser's EventSource resends the last `id:`
 * as `Last-Event-ID` when it reconnects on its own; when the server ends a stream (or `restart()`
 * is called) a new EventSource starts with `?after=<last id>`, so nothing is read twice or missed.
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

  /** Drops the connection and resumes from the last id seen (the way a network blip would). */
  restart(): void {
    this.source?.close();
    this.handlers.status('down');
    this.open();
  }

  /** Disconnects, keeping the cursor; `resume()` reconnects from it (Last-Event-ID semantics). */
  pause(): void {
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

  private open(): void {
    if (this.closed) return;
    const source = new EventSource(this.url(this.lastId), { withCredentials: true });
    this.source = source;
    source.onopen = () => this.handlers.status('live');
    source.onerror = () => {
      this.handlers.status('down');
      // CLOSED means the browser gave up (e.g. the stream ended with an error status): reopen ourselves.
      if (source.readyState === EventSource.CLOSED && !this.closed) this.retry = window.setTimeout(() => this.open(), 1000);
    };
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
