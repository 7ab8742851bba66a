/**
 * A local HTTP server (127.0.0.1, ephemeral port) that replays recorded vendor responses, one queued
 * step per request, and records what each request carried so tests can assert what an adapter sent.
 * Streams are written one SSE event per write, so SDK parsers see real chunk boundaries.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

export interface ReplayStep {
  status?: number;
  headers?: Record<string, string>;
  /** A JSON body (sent with content-type application/json). */
  json?: unknown;
  /** A raw body that is not JSON (a proxy's HTML page), sent with `contentType`. */
  text?: string;
  contentType?: string;
  /** A raw SSE body (sent as text/event-stream), written event by event. */
  sse?: string;
  /** Write only this many SSE events, then destroy the socket: a stream cut mid-way. */
  cutAfterEvents?: number;
  /** Write only this many SSE events, then keep the response open until the client goes away. */
  holdAfterEvents?: number;
  /** Wait this long before each SSE event after the first: a slow but steady stream. */
  intervalMs?: number;
  /** Never answer: no status, no headers, the request held open until the client goes away. */
  hang?: boolean;
}

export interface RecordedRequest {
  method: string;
  /** Path and query string. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, or the raw text when it is not JSON. */
  body: any;
  /** Resolves when the request's socket closes (for held responses: when the client aborted). */
  socketClosed: Promise<void>;
}

export interface ReplayServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  requests: RecordedRequest[];
  /** Queues responses; each request takes the next one. An empty queue answers 599 so tests fail loudly. */
  enqueue(...steps: ReplayStep[]): void;
  close(): Promise<void>;
}

/** Reads `test/fixtures/providers/<name>` (tests run from the repository root). */
export function fixture(name: string): string {
  return readFileSync(resolve(process.cwd(), 'test/fixtures/providers', name), 'utf8');
}

/** Splits an SSE body into events, each keeping its terminating blank line. */
export function sseEvents(text: string): string[] {
  return text.split(/(?<=\r\n\r\n|\n\n)/).filter((e) => e.trim() !== '');
}

export async function startReplayServer(): Promise<ReplayServer> {
  const queue: ReplayStep[] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const socketClosed = new Promise<void>((done) => {
      if (req.socket.destroyed) done();
      else req.socket.once('close', () => done());
    });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        // keep the raw text
      }
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, socketClosed });
      const step = queue.shift();
      if (!step) {
        res.writeHead(599, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'replay-server: no queued response' }));
        return;
      }
      void play(step, res);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  // Node closes a keep-alive socket 5 s after its last response. A test whose loop is busy for
  // seconds (making 100 MB of attachments) can then hand a new request to a socket whose close is
  // already due on that same loop turn: ECONNRESET mid-body, "fetch failed". The client's pool
  // (undici, 4 s) retires idle sockets itself; the server need not race it.
  server.keepAliveTimeout = 0;
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...steps) => queue.push(...steps),
    close: () =>
      new Promise<void>((done) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => done());
      }),
  };
}

async function play(step: ReplayStep, res: ServerResponse): Promise<void> {
  if (step.hang) return;
  const status = step.status ?? 200;
  if (step.text !== undefined) {
    res.writeHead(status, { 'content-type': step.contentType ?? 'text/plain', ...step.headers }).end(step.text);
    return;
  }
  if (step.sse === undefined) {
    const body = step.json === undefined ? '' : JSON.stringify(step.json);
    res.writeHead(status, { 'content-type': 'application/json', ...step.headers }).end(body);
    return;
  }
  res.writeHead(status, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...step.headers });
  const events = sseEvents(step.sse);
  const limit = step.cutAfterEvents ?? step.holdAfterEvents ?? events.length;
  for (const [i, event] of events.slice(0, limit).entries()) {
    if (i > 0 && step.intervalMs) await new Promise((r) => setTimeout(r, step.intervalMs));
    if (res.destroyed) return;
    res.write(event);
    // Yield to the event loop so each event leaves as its own chunk.
    await new Promise((r) => setImmediate(r));
  }
  if (step.cutAfterEvents !== undefined) res.socket?.destroy();
  else if (step.holdAfterEvents === undefined) res.end();
}
