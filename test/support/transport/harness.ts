/**
 * Test harness for the transport: a real HttpServer on 127.0.0.1 with the TestAgent mounted, plus
 * raw HTTP helpers (fetch with the token, an SSE reader that exposes ids and comments).
 */
import { once } from 'node:events';
import net from 'node:net';
import { HttpServer, type AcpTransportHandle, type HttpServerOptions } from '../../../src/daemon/http/http-server.js';
import type { AcpTransportOptions } from '../../../src/daemon/http/acp/acp.types.js';
import type { LogFields, Logger } from '../../../src/core/ports.js';
import { TestAgent, type TestAgentOptions } from './test-agent.js';

export const TOKEN = 'test-token-0123456789abcdef';

export interface Harness {
  server: HttpServer;
  url: string;
  acpUrl: string;
  port: number;
  agent: TestAgent;
  acp: AcpTransportHandle;
  logs: Array<{ level: string; msg: string; fields?: LogFields }>;
  /** fetch against the server with the bearer token (override headers as needed). */
  fetch(path: string, init?: RequestInit & { headers?: Record<string, string> }): Promise<Response>;
  close(): Promise<void>;
}

export function recordingLogger(into: Harness['logs']): Logger {
  const log = (level: string) => (msg: string, fields?: LogFields) => into.push({ level, msg, fields });
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

export async function startHarness(opts: { acp?: AcpTransportOptions; agent?: TestAgentOptions; server?: Partial<HttpServerOptions> } = {}): Promise<Harness> {
  const logs: Harness['logs'] = [];
  const server = new HttpServer({ token: TOKEN, logger: recordingLogger(logs), ...opts.server });
  const agent = new TestAgent(opts.agent);
  const acp = server.mountAcp(agent, opts.acp);
  const info = await server.listen();
  return {
    server,
    url: info.url,
    acpUrl: `${info.url}/acp`,
    port: info.port,
    agent,
    acp,
    logs,
    fetch: (path, init = {}) => fetch(`${info.url}${path}`, { ...init, headers: { Authorization: `Bearer ${TOKEN}`, ...(init.headers ?? {}) } }),
    close: () => server.close(),
  };
}

export const authHeaders = { Authorization: `Bearer ${TOKEN}` };

/** POSTs `initialize` raw and returns the connection id. */
export async function rawInitialize(h: Harness, extraHeaders: Record<string, string> = {}): Promise<string> {
  const res = await h.fetch('/acp', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...extraHeaders },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } }),
  });
  if (res.status !== 200) throw new Error(`initialize: ${res.status} ${await res.text()}`);
  await res.json();
  return res.headers.get('acp-connection-id')!;
}

/** Opens a session's SSE stream on a raw socket that never reads a byte: a client that stalls. */
export async function stalledSseSocket(h: Harness, connectionId: string, sessionId: string): Promise<net.Socket> {
  const socket = net.connect(h.port, '127.0.0.1');
  await once(socket, 'connect');
  socket.pause();
  socket.write(`GET /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nAccept: text/event-stream\r\nAcp-Connection-Id: ${connectionId}\r\nAcp-Session-Id: ${sessionId}\r\n\r\n`);
  return socket;
}

/** POSTs one JSON-RPC message on a connection. */
export function rawPost(h: Harness, connectionId: string, message: unknown, sessionId?: string): Promise<Response> {
  return h.fetch('/acp', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Acp-Connection-Id': connectionId, ...(sessionId ? { 'Acp-Session-Id': sessionId } : {}) },
    body: JSON.stringify(message),
  });
}

export interface SseEvent {
  id?: string;
  data: string;
  json: Record<string, unknown>;
}

/** An SSE GET read event by event, with ids. */
export class SseReader {
  readonly events: SseEvent[] = [];
  /** Comment lines seen (the opening one and keep-alives). */
  comments = 0;
  private waiters: Array<() => void> = [];
  ended = false;
  private readonly done: Promise<void>;

  constructor(readonly response: Response, private readonly abort: AbortController) {
    this.done = this.read();
  }

  static async open(h: Harness, connectionId: string, opts: { sessionId?: string; lastEventId?: string } = {}): Promise<SseReader> {
    const abort = new AbortController();
    const res = await h.fetch('/acp', {
      headers: {
        Accept: 'text/event-stream',
        'Acp-Connection-Id': connectionId,
        ...(opts.sessionId ? { 'Acp-Session-Id': opts.sessionId } : {}),
        ...(opts.lastEventId !== undefined ? { 'Last-Event-ID': opts.lastEventId } : {}),
      },
      signal: abort.signal,
    });
    if (res.status !== 200) throw new Error(`SSE GET: ${res.status} ${await res.text()}`);
    return new SseReader(res, abort);
  }

  private async read(): Promise<void> {
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of this.response.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let sep: number;
        while ((sep = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, sep);
          buf = buf.slice(sep + 2);
          let id: string | undefined;
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) this.comments++;
            if (line.startsWith('id: ')) id = line.slice(4);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (data.length > 0) {
            const text = data.join('\n');
            this.events.push({ ...(id !== undefined ? { id } : {}), data: text, json: JSON.parse(text) });
          }
          for (const w of this.waiters.splice(0)) w();
        }
      }
    } catch {
      // aborted
    } finally {
      this.ended = true;
      for (const w of this.waiters.splice(0)) w();
    }
  }

  /** Resolves once at least `n` events arrived (rejects if the stream ends first). */
  async waitFor(n: number): Promise<SseEvent[]> {
    while (this.events.length < n) {
      if (this.ended) throw new Error(`SSE ended after ${this.events.length} of ${n} events`);
      await new Promise<void>((r) => this.waiters.push(r));
    }
    return this.events;
  }

  /** Resolves once `cond` holds for this reader (checked after every block and at the end). */
  async waitUntil(cond: () => boolean): Promise<void> {
    while (!cond()) {
      if (this.ended) throw new Error('SSE ended before the condition held');
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }

  /** Resolves when the server ends the stream. */
  async waitEnd(): Promise<void> {
    await this.done;
  }

  close(): void {
    this.abort.abort();
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `cond` every few ms until true; fails after `limitMs` (a safety net, not a timing assertion). */
export async function until(cond: () => boolean, what: string, limitMs = 5000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > limitMs) throw new Error(`timed out waiting for ${what}`);
    await delay(5);
  }
}
