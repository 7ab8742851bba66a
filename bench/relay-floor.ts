/**
 * The floor of the relay round trip on this machine, run as its own process by daemon-bench: the
 * least a Streamable-HTTP relay in front of an ACP agent child can do, so that the daemon's round
 * trip is read against what the machine allows, in the same run and through the same lean client.
 *
 * It keeps only what bench/daemon-lean.ts's HTTP client needs: `initialize` answered in the POST's
 * body with an `Acp-Connection-Id`, every other POST answered 202 and written to the child's stdin
 * as one line, an SSE stream per connection and per session (with `id:`s), and each line the child
 * writes parsed (to route it by its id or session) and sent on its stream. No auth, limits, id
 * mapping, log, supervision or keep-alives; one connection at a time; the child is the least ACP
 * agent on the same SDK (bench/acp-baseline.ts), initialized by the floor at start. Prints
 * `{"url","pid"}` on stdout when ready.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uws, type HttpResponse } from '../src/daemon/http/uws.js';
import { writeBaselineAgent } from './acp-baseline.js';
import { onLines } from './daemon-lean.js';

const dir = mkdtempSync(join(tmpdir(), 'troupe-relay-floor-'));
const child = spawn(process.execPath, [writeBaselineAgent(dir)], { stdio: ['pipe', 'pipe', 'inherit'] });
const stop = () => {
  child.kill();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
child.once('exit', () => process.exit(1));

/** SSE streams by key: '' is the connection's, any other key a session's. */
const streams = new Map<string, { res: HttpResponse; lastId: number }>();
/** Where the answer to each client request goes. */
const routes = new Map<unknown, string>();
let childReady: () => void;
const ready = new Promise<void>((r) => (childReady = r));

function send(key: string, line: string): void {
  const s = streams.get(key);
  if (!s) throw new Error(`relay floor: no stream for ${JSON.stringify(key)}`);
  s.res.cork(() => s.res.write(`id: ${++s.lastId}\ndata: ${line}\n\n`));
}

onLines(child.stdout!, (line) => {
  const msg = JSON.parse(line) as { id?: unknown; method?: string; params?: { sessionId?: string } };
  if (msg.id === 0 && msg.method === undefined) childReady(); // the floor's own initialize
  else if (msg.method === undefined) {
    send(routes.get(msg.id) ?? '', line);
    routes.delete(msg.id);
  } else send(msg.params?.sessionId ?? '', line);
});
child.stdin!.write(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } }) + '\n');
await ready;

const app = uws.App();
app.post('/acp', (res, req) => {
  const sessionHeader = req.getHeader('acp-session-id');
  const parts: Buffer[] = [];
  res.onAborted(() => undefined);
  res.onData((ab, last) => {
    parts.push(Buffer.from(ab.slice(0)));
    if (!last) return;
    const body = Buffer.concat(parts).toString('utf8');
    const msg = JSON.parse(body) as { id?: unknown; method?: string; params?: { sessionId?: string } };
    if (msg.method === 'initialize') {
      const answer = JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { protocolVersion: 1, agentCapabilities: {}, authMethods: [] } });
      res.cork(() => res.writeStatus('200 OK').writeHeader('Acp-Connection-Id', 'floor').writeHeader('Content-Type', 'application/json').end(answer));
      return;
    }
    if (msg.id !== undefined && msg.method !== undefined) routes.set(msg.id, sessionHeader || msg.params?.sessionId || '');
    child.stdin!.write(body + '\n');
    res.cork(() => res.writeStatus('202 Accepted').end());
  });
});
app.get('/acp', (res, req) => {
  const key = req.getHeader('acp-session-id');
  res.onAborted(() => streams.delete(key));
  // A comment, so that the head goes out now: the client waits for it before its next POST.
  res.cork(() => res.writeStatus('200 OK').writeHeader('Content-Type', 'text/event-stream').write(': open\n\n'));
  streams.set(key, { res, lastId: 0 });
});
app.del('/acp', (res) => {
  res.cork(() => res.writeStatus('202 Accepted').end());
});
app.listen('127.0.0.1', 0, (socket) => {
  if (!socket) throw new Error('relay floor: cannot listen');
  console.log(JSON.stringify({ url: `http://127.0.0.1:${uws.us_socket_local_port(socket)}`, pid: process.pid }));
});
