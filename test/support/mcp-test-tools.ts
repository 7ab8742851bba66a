// The MCP server of the tests of troupe's MCP tools, built with the MCP SDK: its tools show what
// troupe gave it (cwd, env, headers), what troupe does with results (text, errors), cancel (a call
// that waits for it) and its process (pid); its prompts become slash commands, its resources are read
// through troupe's resource tools. Served over stdio by mcp-test-server.ts, or on 127.0.0.1 over
// Streamable HTTP by `startHttpMcp` and over the legacy HTTP+SSE transport by `startSseMcp`.
import { existsSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ListToolsRequestSchema, RootsListChangedNotificationSchema, type ListToolsResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';

const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });

export function testMcpServer(): McpServer {
  const server = new McpServer({ name: 'troupe-test', version: '1.0.0' });
  // How many times the client said its roots changed (MCP notifications/roots/list_changed).
  let rootsChanged = 0;
  server.server.setNotificationHandler(RootsListChangedNotificationSchema, () => void rootsChanged++);
  server.registerTool('echo', { description: 'Says the text back.', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } }, async ({ text: t }) => text(`echo: ${t}`));
  server.registerTool('touch', { title: 'Create a file', description: 'Creates an empty file in the working directory.', inputSchema: { name: z.string() } }, async ({ name }) => {
    writeFileSync(join(process.cwd(), name), '');
    return text(`created ${name} in ${process.cwd()}`);
  });
  server.registerTool('env', { description: 'Which variables (and roots) the server sees.', annotations: { readOnlyHint: true } }, async () => {
    const roots = await server.server.listRoots().then((r) => r.roots, () => null);
    return text(JSON.stringify({ MCP_TEST_VAR: process.env.MCP_TEST_VAR ?? null, ANTHROPIC_API_KEY: process.env.ANTHROPIC_API_KEY ?? null, pid: process.pid, roots, rootsChanged }));
  });
  // MCP_TEST_FAIL_TEXT: what `fail` says (set empty: a server that fails without a word).
  server.registerTool('fail', { description: 'Always fails.', annotations: { readOnlyHint: true } }, async () => ({ ...text(process.env.MCP_TEST_FAIL_TEXT ?? 'it failed on purpose'), isError: true }));
  server.registerTool('hang', { description: 'Waits until cancelled.', annotations: { readOnlyHint: true } }, (extra) =>
    new Promise<ReturnType<typeof text>>((resolve) => extra.signal.addEventListener('abort', () => resolve(text('cancelled')), { once: true })),
  );
  server.registerTool('count', { description: 'Counts to n, telling its progress.', inputSchema: { n: z.number(), delayMs: z.number().optional() }, annotations: { readOnlyHint: true } }, async ({ n, delayMs }, extra) => {
    const token = extra._meta?.progressToken;
    for (let i = 1; i <= n; i++) {
      await new Promise((resolve) => setTimeout(resolve, delayMs ?? 10));
      // MCP_TEST_PROGRESS_PAD: each progress message is that many characters longer.
      const message = `step ${i}${'.'.repeat(Number(process.env.MCP_TEST_PROGRESS_PAD ?? 0))}`;
      if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: n, message } });
    }
    return text(token === undefined ? `counted ${n}, asked for no progress` : `counted ${n}`);
  });
  // MCP_TEST_FLOOD: `flood` answers with more than the 10 MB a client's stdio transport reads.
  if (process.env.MCP_TEST_FLOOD) server.registerTool('flood', { description: 'Answers with 11 MB of text.' }, async () => text('x'.repeat(11 * 1024 * 1024)));
  // MCP_TEST_BIG: `big` answers with `chars` characters of text (`char`, default "x") in `blocks`
  // text blocks (a result near the 10 MB a message may have, whole or in many pieces).
  if (process.env.MCP_TEST_BIG) {
    server.registerTool('big', { description: 'Answers with that many characters of text, in that many blocks.', inputSchema: { chars: z.number(), blocks: z.number().optional(), char: z.string().optional() }, annotations: { readOnlyHint: true } }, async ({ chars, blocks = 1, char = 'x' }) => {
      const each = Math.floor(chars / blocks);
      const piece = char.repeat(each);
      return { content: Array.from({ length: blocks }, (_, i) => ({ type: 'text' as const, text: i === blocks - 1 ? char.repeat(chars - each * (blocks - 1)) : piece })) };
    });
  }
  // MCP_TEST_JUNK: `junk` answers with that many content blocks MCP does not allow (`{}`) after a good
  // one (see answerJunk for `dense`), and so do `prompts/get` (messages) and `resources/read` (contents); MCP_TEST_JUNK_LISTS:
  // `prompts/list` and `resources/list` too. Sent as they are (McpServer would check them, and fail
  // with a message of them all). Set when the server is connected (see below).
  const junk = Number(process.env.MCP_TEST_JUNK);
  if (junk > 0) {
    server.registerTool('junk', { description: 'Answers with blocks MCP does not allow.' }, async () => text('replaced'));
    server.registerTool('dense_answer', { description: 'Answers with a block that holds too much.' }, async () => text('replaced'));
  }
  // MCP_TEST_LISTED: the list also has `listed_<n>`, n counting the listings asked for (which
  // listing a client has), `tools_changed` tells the client the list changed (`times` times in a
  // burst), and `listings` says how many listings were asked for and the most answered at once.
  // MCP_TEST_LIST_GATE: a file; the second listing answers only once it exists.
  // MCP_TEST_LIST_FAIL: every listing after the first fails. MCP_TEST_LIST_CHANGE_FIRST: the first
  // listing says the list changed before it answers (a change during a client's first listing).
  let listings = 0;
  let inFlight = 0;
  let mostInFlight = 0;
  if (process.env.MCP_TEST_LISTED) {
    server.registerTool('tools_changed', { description: 'Says the tool list changed.', inputSchema: { times: z.number().optional() } }, async ({ times }) => {
      for (let i = 0; i < (times ?? 1); i++) void server.sendToolListChanged();
      return text('told');
    });
    server.registerTool('listings', { description: 'How many tool listings were asked for, and the most at once.' }, async () => text(JSON.stringify({ listings, mostAtOnce: mostInFlight })));
  }
  const gate = process.env.MCP_TEST_LIST_GATE;
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, (request: unknown, extra: unknown) => Promise<ListToolsResult>> })._requestHandlers;
  const list = handlers.get('tools/list')!;
  server.server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
    const n = ++listings;
    mostInFlight = Math.max(mostInFlight, ++inFlight);
    try {
      return await listed(n, request, extra);
    } finally {
      inFlight--;
    }
  });
  const listed = async (n: number, request: Parameters<typeof list>[0], extra: Parameters<typeof list>[1]): Promise<ListToolsResult> => {
    const { tools } = await list(request, extra);
    if (process.env.MCP_TEST_LIST_FAIL && n > 1) throw new Error(`listing ${n} fails on purpose`);
    if (process.env.MCP_TEST_LIST_CHANGE_FIRST && n === 1) void server.sendToolListChanged();
    while (gate && n === 2 && !existsSync(gate)) await new Promise((resolve) => setTimeout(resolve, 10));
    const extraTools: unknown[] = process.env.MCP_TEST_LISTED ? [{ name: `listed_${n}`, inputSchema: { type: 'object' } }] : [];
    // MCP_TEST_BROKEN_TOOLS: the list also has tools a broken server lists: one whose input schema is
    // not an object's, one without a name, and one whose output schema no validator compiles.
    if (process.env.MCP_TEST_BROKEN_TOOLS) {
      extraTools.push(
        { name: 'no_object', inputSchema: { properties: {} } },
        { description: 'No name.', inputSchema: { type: 'object' } },
        { name: 'odd_output', inputSchema: { type: 'object' }, outputSchema: { type: 'object', properties: { x: { type: 'nonsense' } } } },
      );
    }
    return { tools: [...tools, ...(extraTools as ListToolsResult['tools'])] };
  };
  // MCP_TEST_ENDLESS_TOOLS: a server whose tool list never ends: every page that many tools, and a
  // next cursor. MCP_TEST_ENDLESS_BROKEN: those tools have no input schema (MCP refuses each).
  const endless = Number(process.env.MCP_TEST_ENDLESS_TOOLS);
  if (endless > 0) {
    const inputSchema = process.env.MCP_TEST_ENDLESS_BROKEN ? {} : { inputSchema: { type: 'object' as const } };
    server.server.setRequestHandler(ListToolsRequestSchema, (request) => {
      const page = Number(request.params?.cursor ?? 0);
      return { tools: Array.from({ length: endless }, (_, i) => ({ name: `t_${page}_${i}`, ...inputSchema })) as ListToolsResult['tools'], nextCursor: String(page + 1) };
    });
  }
  // MCP_TEST_SILENT_TOOLS: a server that answers initialize, and never tools/list.
  if (process.env.MCP_TEST_SILENT_TOOLS) server.server.setRequestHandler(ListToolsRequestSchema, () => new Promise<never>(() => undefined));
  // Prompts: the session's slash commands.
  // MCP_TEST_GREET_DESCRIPTION: another description (a server's text shown by its clients).
  server.registerPrompt('greet', { description: process.env.MCP_TEST_GREET_DESCRIPTION ?? 'Asks for a greeting.', argsSchema: { name: z.string(), style: z.string().optional() } }, ({ name, style }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Please greet ${name}${style ? ` in a ${style} way` : ''}.` } }],
  }));
  server.registerPrompt('recap', { title: 'Recap', description: 'A conversation to continue.' }, () => ({
    messages: [
      { role: 'user', content: { type: 'text', text: 'What did we do?' } },
      { role: 'assistant', content: { type: 'text', text: 'We wrote the recap tests.' } },
    ],
  }));
  // Resources: read through troupe's mcp__list_resources and mcp__read_resource.
  server.registerResource('notes', 'test://notes', { title: 'Notes', description: 'What the team wrote down.', mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, text: 'remember the milk', mimeType: 'text/plain' }],
  }));
  server.registerResource('day', new ResourceTemplate('test://day/{n}', { list: undefined }), { description: 'A day of the log.' }, async (uri, { n }) => ({
    contents: [{ uri: uri.href, text: `day ${String(n)}` }],
  }));
  // MCP_TEST_LATE_PROMPT_MS: a prompt added that long after start (the server tells its client).
  // MCP_TEST_LATE_PROMPT_GATE: a file; the prompt is added once it exists (a test that looks at the
  // list before the prompt is added opens the gate after looking: a time after start may pass
  // before the first listing on a loaded machine).
  const addLate = () => server.registerPrompt('late', { description: 'Added while running.' }, () => ({ messages: [{ role: 'user', content: { type: 'text', text: 'late' } }] }));
  const late = Number(process.env.MCP_TEST_LATE_PROMPT_MS);
  if (late > 0) setTimeout(addLate, late).unref();
  const lateGate = process.env.MCP_TEST_LATE_PROMPT_GATE;
  if (lateGate) {
    const poll = setInterval(() => existsSync(lateGate) && (clearInterval(poll), addLate()), 10);
    poll.unref();
  }
  if (junk > 0) answerJunk(server, junk);
  return server;
}

/** MCP_TEST_JUNK's answers: one good item, then `n` that MCP does not allow. */
function answerJunk(server: McpServer, n: number): void {
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, (request: { params: { name?: string } }, extra: unknown) => Promise<unknown>> })._requestHandlers;
  const junk = (good: object) => [good, ...Array.from({ length: n }, () => ({}))];
  const wrap = (method: string, answer: (request: { params: { name?: string } }) => object | undefined) => {
    const original = handlers.get(method)!;
    handlers.set(method, async (request, extra) => answer(request) ?? original(request, extra));
  };
  wrap('tools/call', (r) => (r.params.name === 'junk' ? { content: junk({ type: 'text', text: 'fine' }) } : undefined));
  // `dense_answer`: one content block whose annotations hold `n` values; and a listed tool `dense`
  // whose input schema has `n` properties (neither fits MCP's schema).
  wrap('tools/call', (r) => (r.params.name === 'dense_answer' ? { content: [{ type: 'text', text: 'fine', annotations: { audience: Array.from({ length: n }, () => 'x') } }] } : undefined));
  const listTools = handlers.get('tools/list')!;
  handlers.set('tools/list', async (request, extra) => {
    const { tools } = (await listTools(request, extra)) as { tools: unknown[] };
    return { tools: [...tools, { name: 'dense', inputSchema: { type: 'object', properties: Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, 1])) } }] };
  });
  wrap('prompts/get', () => ({ messages: junk({ role: 'user', content: { type: 'text', text: 'fine' } }) }));
  wrap('resources/read', () => ({ contents: junk({ uri: 'test://notes', text: 'fine' }) }));
  if (!process.env.MCP_TEST_JUNK_LISTS) return;
  wrap('prompts/list', () => ({ prompts: junk({ name: 'fine' }) }));
  wrap('resources/list', () => ({ resources: junk({ uri: 'test://notes', name: 'fine' }) }));
}

async function bodyOf(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
}

/** An HTTP server on 127.0.0.1 (an ephemeral port) serving `path`; `close()` ends its open streams too. */
async function listen(path: string, handle: RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const http = createServer(handle);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}${path}`,
    close: () =>
      new Promise((resolve) => {
        http.close(() => resolve());
        // A client's open GET stream would hold the close forever.
        http.closeAllConnections();
      }),
  };
}

/** The test server over stateless Streamable HTTP on 127.0.0.1; `authorizations`: each request's Authorization header. */
export async function startHttpMcp(): Promise<{ url: string; authorizations: string[]; close(): Promise<void> }> {
  const authorizations: string[] = [];
  const listening = await listen('/mcp', (req, res) => {
    authorizations.push(req.headers.authorization ?? '');
    void (async () => {
      // Stateless: a server and a transport per request, as the SDK's examples do.
      const server = testMcpServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => void transport.close().then(() => server.close()));
      await server.connect(transport);
      await transport.handleRequest(req, res, req.method === 'POST' ? await bodyOf(req) : undefined);
    })().catch(() => res.writeHead(500).end());
  });
  return { ...listening, authorizations };
}

/**
 * The test server over MCP's legacy HTTP+SSE transport on 127.0.0.1, as the SDK's examples serve it:
 * `GET /sse` opens a client's event stream (a server of its own) and names its `POST /messages?sessionId=…`
 * endpoint. `requests`: each request's method and Authorization header; `streams()`: the event streams open.
 */
export async function startSseMcp(): Promise<{ url: string; requests: { method: string; authorization: string }[]; streams(): number; close(): Promise<void> }> {
  const requests: { method: string; authorization: string }[] = [];
  const streams = new Map<string, SSEServerTransport>();
  const listening = await listen('/sse', (req, res) => {
    requests.push({ method: req.method ?? '', authorization: req.headers.authorization ?? '' });
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    void (async () => {
      if (req.method === 'GET' && url.pathname === '/sse') {
        const transport = new SSEServerTransport('/messages', res);
        const server = testMcpServer();
        streams.set(transport.sessionId, transport);
        res.on('close', () => {
          streams.delete(transport.sessionId);
          void server.close();
        });
        await server.connect(transport);
      } else if (req.method === 'POST' && url.pathname === '/messages') {
        const transport = streams.get(url.searchParams.get('sessionId') ?? '');
        if (transport) await transport.handlePostMessage(req, res);
        else res.writeHead(404).end('no such session');
      } else res.writeHead(404).end();
    })().catch(() => res.headersSent || res.writeHead(500).end());
  });
  return { ...listening, requests, streams: () => streams.size };
}
