/**
 * Lean clients of the daemon benchmark: the same wire protocol as the SDK's clients with as little
 * client-side work as possible, so that a figure shows the server's cost rather than the SDK
 * client's (about 0.5 ms per HTTP request and ~19 µs per received event here).
 *
 * - HTTP: raw HTTP/1.1 on `node:net`. POSTs go one at a time on one keep-alive socket; every SSE
 *   stream (the connection's, and one per session, opened before the first message naming the
 *   session) is its own socket, parsed by hand (status line, headers, chunked or length bodies,
 *   `id:`/`data:` fields).
 * - WebSocket: the `ws` package, one text frame per message.
 * - stdio: NDJSON lines on a child's stdin/stdout.
 *
 * What every lean client checks of each message it receives: responses are parsed (JSON.parse) and
 * matched to their request by id. `session/update` notifications are NOT parsed: the client reads
 * the session id from the fixed prefix and the troupe seq from `_meta.troupe.seq` (the same cheap
 * scan the daemon uses, src/wire/update-line.ts; an update that does not match it is parsed), counts
 * `agent_message_chunk`s, and checks that seqs per session only ever increase (no duplicate, no
 * reordering) and, on SSE, that the `id:`s of each stream are contiguous (nothing lost). A failed
 * check throws.
 */
import { type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import WebSocket from 'ws';
import { classifyUpdateLine } from '../src/wire/update-line.js';

/** The client surface the latency and streaming series use; the SDK counting client has it too. */
export interface BenchClient {
  request(method: string, params: unknown): Promise<any>;
  chunkCount(sessionId: string): number;
  chunksReach(sessionId: string, n: number): Promise<void>;
  newSession(cwd: string): Promise<string>;
  close(): void;
}

const CHUNK = '"sessionUpdate":"agent_message_chunk"';

/** Receiving side shared by the lean clients: id matching, update counting and checks. */
abstract class LeanBase implements BenchClient {
  total = 0;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private readonly chunks = new Map<string, number>();
  private readonly lastSeq = new Map<string, number>();
  private readonly waiters: { sessionId: string; n: number; resolve: () => void }[] = [];

  protected abstract post(json: string, id: number | undefined, sessionId: string | undefined): Promise<void>;
  abstract close(): void;

  async request(method: string, params: unknown): Promise<any> {
    const id = this.nextId++;
    const sessionId = (params as { sessionId?: unknown } | undefined)?.sessionId;
    const answer = new Promise((resolve, reject) => this.waiting.set(id, { resolve, reject }));
    // The answer may arrive (and fail) before the POST's own status is in.
    answer.catch(() => undefined);
    await this.post(JSON.stringify({ jsonrpc: '2.0', id, method, params }), id, typeof sessionId === 'string' ? sessionId : undefined);
    return answer;
  }

  async init(): Promise<this> {
    await this.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    return this;
  }

  async newSession(cwd: string): Promise<string> {
    return (await this.request('session/new', { cwd, mcpServers: [] })).sessionId;
  }

  chunkCount(sessionId: string): number {
    return this.chunks.get(sessionId) ?? 0;
  }

  chunksReach(sessionId: string, n: number): Promise<void> {
    if (this.chunkCount(sessionId) >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ sessionId, n, resolve }));
  }

  /** One received JSON-RPC message as text. */
  protected receive(json: string): void {
    const u = classifyUpdateLine(json);
    if (u) return this.update(u.sessionId, u.seq, json.includes(CHUNK));
    const msg = JSON.parse(json) as { id?: unknown; method?: string; params?: any; result?: unknown; error?: { message?: string } };
    if (msg.method === 'session/update') {
      const seq = msg.params?.update?._meta?.troupe?.seq;
      return this.update(msg.params.sessionId, typeof seq === 'number' ? seq : undefined, msg.params?.update?.sessionUpdate === 'agent_message_chunk');
    }
    if (msg.method !== undefined) {
      // A request of the agent's (a permission prompt): allow, as the SDK counting client does.
      if (msg.id !== undefined) void this.post(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { outcome: { outcome: 'selected', optionId: 'allow_once' } } }), undefined, msg.params?.sessionId);
      return;
    }
    const w = this.waiting.get(Number(msg.id));
    if (!w) return;
    this.waiting.delete(Number(msg.id));
    if (msg.error) w.reject(new Error(String(msg.error.message)));
    else w.resolve(msg.result);
  }

  private update(sessionId: string, seq: number | undefined, chunk: boolean): void {
    this.total++;
    if (seq !== undefined) {
      const last = this.lastSeq.get(sessionId) ?? 0;
      if (seq <= last) throw new Error(`lean client: session ${sessionId} seq ${seq} after ${last}`);
      this.lastSeq.set(sessionId, seq);
    }
    if (!chunk) return;
    const n = (this.chunks.get(sessionId) ?? 0) + 1;
    this.chunks.set(sessionId, n);
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!;
      if (w.sessionId === sessionId && n >= w.n) this.waiters.splice(i, 1), w.resolve();
    }
  }

  /** Every request still waiting fails (the connection went away). */
  protected failAll(err: Error): void {
    for (const w of this.waiting.values()) w.reject(err);
    this.waiting.clear();
  }
}

interface Head {
  status: number;
  headers: Record<string, string>;
}

/** Parses an HTTP/1.1 response head; undefined until `\r\n\r\n` has arrived. */
function parseHead(buf: Buffer): { head: Head; rest: Buffer } | undefined {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(lines[0]!.split(' ')[1]);
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const c = l.indexOf(':');
    if (c > 0) headers[l.slice(0, c).trim().toLowerCase()] = l.slice(c + 1).trim();
  }
  return { head: { status, headers }, rest: buf.subarray(end + 4) };
}

/** Incremental `Transfer-Encoding: chunked` decoder. */
class Dechunker {
  private buf: Buffer = Buffer.alloc(0);
  private left = 0;
  done = false;

  /** Returns the payload bytes decoded so far from `data`. */
  push(data: Buffer): Buffer[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, data]) : data;
    const out: Buffer[] = [];
    for (;;) {
      if (this.left > 0) {
        const take = Math.min(this.left, this.buf.length);
        if (take === 0) break;
        out.push(this.buf.subarray(0, take));
        this.buf = this.buf.subarray(take);
        this.left -= take;
        if (this.left > 0) break;
        this.left = -2; // the CRLF after the chunk
      }
      if (this.left === -2) {
        if (this.buf.length < 2) break;
        this.buf = this.buf.subarray(2);
        this.left = 0;
      }
      const nl = this.buf.indexOf('\r\n');
      if (nl < 0) break;
      const size = parseInt(this.buf.subarray(0, nl).toString('latin1'), 16);
      this.buf = this.buf.subarray(nl + 2);
      if (size === 0) {
        this.done = true;
        break;
      }
      this.left = size;
    }
    return out;
  }
}

const requestText = (method: string, path: string, host: string, headers: Record<string, string>, body = ''): string => {
  let text = `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\n`;
  for (const [k, v] of Object.entries(headers)) text += `${k}: ${v}\r\n`;
  if (method === 'POST') text += `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
  return text + '\r\n' + body;
};

/**
 * One keep-alive socket for POSTs, one request at a time (FIFO). As any HTTP/1.1 client must, it
 * opens a new socket when the server has closed the idle one (uWS closes a keep-alive socket after
 * about 10 s without a request), and sends a request again on a new socket when the server closed
 * the old one before answering any of it: the close crossed the request, which the server never
 * read (seen with 100 sessions on a slow day, where a round lasts more than 10 s).
 */
class PostSocket {
  private buf: Buffer = Buffer.alloc(0);
  private readonly queue: { resolve(r: Head & { body: string }): void; reject(e: Error): void }[] = [];
  private chain: Promise<unknown> = Promise.resolve();
  private socket: Socket;
  private closed = false;

  constructor(private readonly open: () => Socket) {
    this.socket = this.connect();
  }

  private connect(): Socket {
    const socket = this.open();
    this.closed = false;
    this.buf = Buffer.alloc(0);
    socket.setNoDelay(true);
    socket.on('data', (d: Buffer) => socket === this.socket && this.data(d));
    // The server's FIN: no request goes on this socket any more.
    socket.on('end', () => socket === this.socket && (this.closed = true));
    const fail = (e: Error) => {
      if (socket !== this.socket) return;
      this.closed = true;
      this.queue.splice(0).forEach((q) => q.reject(Object.assign(e, { unanswered: this.buf.length === 0 })));
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('socket closed')));
    return socket;
  }

  send(text: string): Promise<Head & { body: string }> {
    const attempt = () =>
      new Promise<Head & { body: string }>((resolve, reject) => {
        if (this.closed || this.socket.destroyed) this.socket = this.connect();
        this.queue.push({ resolve, reject });
        this.socket.write(text);
      });
    const run = this.chain.then(() => attempt().catch((e: Error & { unanswered?: boolean }) => (e.unanswered ? attempt() : Promise.reject(e))));
    this.chain = run.catch(() => undefined);
    return run;
  }

  private data(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    for (;;) {
      const parsed = parseHead(this.buf);
      if (!parsed) return;
      const { head, rest } = parsed;
      let body: Buffer;
      if (head.headers['transfer-encoding']?.includes('chunked')) {
        const dc = new Dechunker();
        const parts = dc.push(rest);
        if (!dc.done) return; // wait for the whole body (small responses arrive at once in practice)
        body = Buffer.concat(parts);
        this.buf = Buffer.alloc(0);
      } else {
        const len = Number(head.headers['content-length'] ?? 0);
        if (rest.length < len) return;
        body = rest.subarray(0, len);
        this.buf = rest.subarray(len);
      }
      this.queue.shift()?.resolve({ ...head, body: body.toString('utf8') });
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

/** The lean HTTP client: raw POSTs plus raw SSE streams. */
export class LeanHttpClient extends LeanBase {
  private connectionId?: string;
  private readonly streams = new Map<string, Promise<Socket>>();
  private readonly sockets: Socket[] = [];
  private readonly posts: PostSocket;
  private readonly hostPort: string;

  constructor(private readonly port: number, private readonly headers: Record<string, string> = {}) {
    super();
    this.hostPort = `127.0.0.1:${port}`;
    this.posts = new PostSocket(() => {
      const s = connect(port, '127.0.0.1');
      this.sockets.push(s);
      return s;
    });
  }

  static at(url: string, headers: Record<string, string> = {}): LeanHttpClient {
    return new LeanHttpClient(Number(new URL(url).port), headers);
  }

  protected async post(json: string, _id: number | undefined, sessionId: string | undefined): Promise<void> {
    const headers: Record<string, string> = { ...this.headers, Accept: 'application/json, text/event-stream' };
    if (this.connectionId) headers['Acp-Connection-Id'] = this.connectionId;
    if (sessionId !== undefined && this.connectionId) {
      headers['Acp-Session-Id'] = sessionId;
      await this.stream(sessionId);
    }
    const r = await this.posts.send(requestText('POST', '/acp', this.hostPort, headers, json));
    if (!this.connectionId) {
      // initialize: answered in the body, with the connection id; then the connection stream.
      if (r.status !== 200) throw new Error(`initialize: HTTP ${r.status} ${r.body}`);
      this.connectionId = r.headers['acp-connection-id'];
      await this.stream(undefined);
      this.receive(r.body);
      return;
    }
    if (r.status !== 202) throw new Error(`POST: HTTP ${r.status} ${r.body}`);
  }

  /** Opens (once) the SSE stream of the connection or of a session; resolves when its head is in. */
  private stream(sessionId: string | undefined): Promise<Socket> {
    const key = sessionId ?? '';
    let s = this.streams.get(key);
    if (!s) {
      s = this.openStream(sessionId);
      this.streams.set(key, s);
    }
    return s;
  }

  private openStream(sessionId: string | undefined): Promise<Socket> {
    const headers: Record<string, string> = { ...this.headers, Accept: 'text/event-stream', 'Acp-Connection-Id': this.connectionId! };
    if (sessionId !== undefined) headers['Acp-Session-Id'] = sessionId;
    const socket = connect(this.port, '127.0.0.1');
    this.sockets.push(socket);
    socket.setNoDelay(true);
    return new Promise((resolve, reject) => {
      let buf: Buffer | undefined = Buffer.alloc(0);
      let dechunk: Dechunker | undefined;
      const decoder = new StringDecoder('utf8');
      let text = '';
      let lastId = 0;
      const events = (payload: Buffer) => {
        text += decoder.write(payload);
        let start = 0;
        let end: number;
        while ((end = text.indexOf('\n\n', start)) >= 0) {
          const block = text.slice(start, end);
          start = end + 2;
          let data: string | undefined;
          let from = 0;
          while (from < block.length) {
            let nl = block.indexOf('\n', from);
            if (nl < 0) nl = block.length;
            const line = block.slice(from, nl);
            from = nl + 1;
            if (line.startsWith('data: ')) data = data === undefined ? line.slice(6) : `${data}\n${line.slice(6)}`;
            else if (line.startsWith('id: ')) {
              const id = Number(line.slice(4));
              if (id !== lastId + 1) throw new Error(`lean client: SSE id ${id} after ${lastId}`);
              lastId = id;
            }
          }
          if (data !== undefined) this.receive(data);
        }
        text = start === 0 ? text : text.slice(start);
      };
      socket.on('error', reject);
      socket.on('close', () => this.failAll(new Error('stream closed')));
      socket.on('data', (d: Buffer) => {
        if (buf) {
          buf = buf.length ? Buffer.concat([buf, d]) : d;
          const parsed = parseHead(buf);
          if (!parsed) return;
          buf = undefined;
          if (parsed.head.status !== 200) return reject(new Error(`GET: HTTP ${parsed.head.status}`));
          if (parsed.head.headers['transfer-encoding']?.includes('chunked')) dechunk = new Dechunker();
          resolve(socket);
          d = parsed.rest;
        }
        if (dechunk) for (const p of dechunk.push(d)) events(p);
        else events(d);
      });
      socket.write(requestText('GET', '/acp', this.hostPort, headers));
    });
  }

  /** Vanishes: every socket destroyed, no DELETE (a client that crashed or lost its network). */
  drop(): void {
    for (const s of this.sockets) s.destroy();
  }

  /** DELETEs the connection (as the SDK client does, so the server stops queueing for it), then closes. */
  close(): void {
    const done = () => this.drop();
    if (!this.connectionId) return done();
    const deleted = this.posts.send(requestText('DELETE', '/acp', this.hostPort, { ...this.headers, 'Acp-Connection-Id': this.connectionId }));
    const timer = setTimeout(done, 1000);
    void deleted.catch(() => undefined).finally(() => (clearTimeout(timer), done()));
  }
}

/** The lean WebSocket client (`ws`). */
export class LeanWsClient extends LeanBase {
  private readonly ws: WebSocket;
  private readonly opened: Promise<void>;

  constructor(url: string, headers: Record<string, string> = {}) {
    super();
    this.ws = new WebSocket(url.replace(/^http/, 'ws') + '/acp', { headers });
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
    });
    this.ws.on('message', (data, isBinary) => {
      if (!isBinary) this.receive(data.toString());
    });
    this.ws.on('close', () => this.failAll(new Error('socket closed')));
  }

  protected async post(json: string): Promise<void> {
    await this.opened;
    this.ws.send(json);
  }

  close(): void {
    this.ws.close();
  }

  /** Vanishes: the TCP connection destroyed without a close frame. */
  drop(): void {
    this.ws.terminate();
  }
}

/** Calls `f` with each non-empty line a stream carries (NDJSON), as the lines complete. */
export function onLines(stream: Readable, f: (line: string) => void): void {
  stream.setEncoding('utf8');
  let rest = '';
  stream.on('data', (chunk: string) => {
    const text = rest + chunk;
    let start = 0;
    let nl: number;
    while ((nl = text.indexOf('\n', start)) >= 0) {
      const line = text.slice(start, nl);
      start = nl + 1;
      if (line) f(line);
    }
    rest = text.slice(start);
  });
}

/** The lean stdio client: NDJSON on a `troupe acp` child's stdin/stdout. */
export class LeanStdioClient extends LeanBase {
  constructor(private readonly proc: ChildProcess) {
    super();
    onLines(proc.stdout!, (line) => this.receive(line));
  }

  protected async post(json: string): Promise<void> {
    this.proc.stdin!.write(json + '\n');
  }

  close(): void {
    this.proc.stdin!.end();
  }
}
