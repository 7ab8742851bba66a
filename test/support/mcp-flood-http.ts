// An MCP server on 127.0.0.1 that floods its client, written by hand (the SDK's server cannot send
// what no server should): over Streamable HTTP (`/mcp`) and over the legacy HTTP+SSE transport
// (`/sse`, its messages posted to `/messages`). It serves `echo`; `flood`, whose answer is one
// message of `floodBytes` (a JSON body, or one event of an event stream), written as the client
// reads it: `written()` tells how much the client took before it stopped reading; and, on an event
// stream, `chatty`, whose answer follows `floodBytes` of log messages of 1 MiB each.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

type Message = { jsonrpc: '2.0'; id?: number | string; method?: string; params?: { name?: string; arguments?: { text?: string } } };
type Mode = 'json' | 'event';

const CHUNK = 1024 * 1024;

export interface FloodServer {
  httpUrl: (mode: Mode) => string;
  sseUrl: string;
  /** How many bytes of flood answers the server has handed to its sockets. */
  written(): number;
  close(): Promise<void>;
}

export async function startFloodMcp(floodBytes: number): Promise<FloodServer> {
  let written = 0;
  // The legacy transport's open event streams: answers go there.
  const streams = new Set<ServerResponse>();

  const answer = (msg: Message): object | 'flood' | 'chatty' | undefined => {
    if (msg.id === undefined) return undefined;
    switch (msg.method) {
      case 'initialize':
        return { jsonrpc: '2.0', id: msg.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'flood', version: '1' } } };
      case 'tools/list':
        return { jsonrpc: '2.0', id: msg.id, result: { tools: ['echo', 'flood', 'chatty'].map((name) => ({ name, inputSchema: { type: 'object' } })) } };
      case 'tools/call':
        if (msg.params?.name === 'flood' || msg.params?.name === 'chatty') return msg.params.name;
        return { jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: `echo: ${msg.params?.arguments?.text ?? ''}` }] } };
      default:
        return { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'no such method' } };
    }
  };

  // One message of floodBytes: `prefix` + the text + `suffix`, written as fast as the client reads.
  const flood = async (res: ServerResponse, id: number | string, prefix: string, suffix: string) => {
    const head = `${prefix}{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`;
    const tail = `"}]}}${suffix}`;
    const write = (s: string) => {
      written += Buffer.byteLength(s);
      return res.write(s) ? Promise.resolve() : new Promise<void>((resolve) => { res.once('drain', resolve); res.once('close', resolve); });
    };
    await write(head);
    for (let left = floodBytes; left > 0 && !res.destroyed; left -= CHUNK) await write('x'.repeat(Math.min(CHUNK, left)));
    if (!res.destroyed) await write(tail);
  };
  // floodBytes of messages of 1 MiB each on an event stream, then the answer.
  const chatty = async (res: ServerResponse, id: number | string, event: string) => {
    const log = `${event}data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'debug', data: 'x'.repeat(CHUNK) } })}\n\n`;
    for (let left = floodBytes; left > 0 && !res.destroyed; left -= CHUNK) if (!res.write(log)) await new Promise((resolve) => res.once('drain', resolve));
    res.write(`${event}data: ${JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'chatted' }] } })}\n\n`);
  };

  const http = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (req.method === 'GET' && url.pathname === '/sse') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('event: endpoint\ndata: /messages\n\n');
        streams.add(res);
        res.on('close', () => streams.delete(res));
        return;
      }
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const msg = JSON.parse(await bodyOf(req)) as Message;
      const reply = answer(msg);
      if (url.pathname === '/messages') {
        res.writeHead(202).end('Accepted');
        const stream = [...streams][0];
        if (!stream || reply === undefined) return;
        if (reply === 'flood') await flood(stream, msg.id!, 'event: message\ndata: ', '\n\n');
        else if (reply === 'chatty') await chatty(stream, msg.id!, 'event: message\n');
        else stream.write(`event: message\ndata: ${JSON.stringify(reply)}\n\n`);
        return;
      }
      if (reply === undefined) return void res.writeHead(202).end();
      const mode = url.searchParams.get('mode') as Mode;
      if (mode === 'event') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        if (reply === 'flood') await flood(res, msg.id!, 'data: ', '\n\n');
        else if (reply === 'chatty') await chatty(res, msg.id!, '');
        else res.write(`data: ${JSON.stringify(reply)}\n\n`);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        if (reply === 'flood') await flood(res, msg.id!, '', '');
        else res.write(JSON.stringify(reply));
      }
      res.end();
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    httpUrl: (mode) => `${base}/mcp?mode=${mode}`,
    sseUrl: `${base}/sse`,
    written: () => written,
    close: () =>
      new Promise((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
