/**
 * The tools of a session's MCP servers (spec/tools.md §7): each server the ACP client named in
 * `mcpServers` is started over stdio (the transport every ACP agent must support) or reached over
 * Streamable HTTP or HTTP+SSE, its tools listed, and offered to the model as `mcp__<server>__<tool>`.
 * A call goes to the server through the MCP SDK; only the transport differs between servers.
 * Its prompts become the session's slash commands (mcp-prompts.ts), and its resources are read
 * through two tools of their own (mcp-resources.ts).
 * Only this folder imports the SDK, and only when a session has servers (session-mcp.ts loads it).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { randomUUID } from 'node:crypto';
import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ErrorCode, ListRootsRequestSchema, McpError, PromptListChangedNotificationSchema, ToolListChangedNotificationSchema, ToolSchema, type Prompt, type Tool } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import type { ContentBlock } from '../../core/events.js';
import { TroupeError } from '../../core/errors.js';
import { AGENT_MARKER_ENV, signalMarked } from '../../core/marked-processes.js';
import type { Logger, ToolCallRequest, ToolDescription, ToolHost, ToolResult, ToolRunContext } from '../../core/ports.js';
import type { ToolSpec } from '../../core/provider.js';
import type { McpServerConfig } from './mcp-servers.js';
import { titleText } from '../tool.js';
import { boundedFetch } from './mcp-bounded-fetch.js';
import { checkItem, getPrompt, uncheckedCall, uncheckedRead, uncheckedToolsPage } from './mcp-checked.js';
import { isOverlongMessage, OVERLONG, OVERLONG_REMOTE, reasonOf, startedInMissingDirectory, STDIO_MAX_MESSAGE_BYTES } from './mcp-errors.js';
import { inputProblem } from './mcp-input-check.js';
import { ServerList } from './mcp-lists.js';
import { callOutput, cut, progressShown } from './mcp-results.js';
import { allPages } from './mcp-pages.js';
import { commandOf, listPrompts, promptArguments, promptContent, type McpCommand, type PromptEntry } from './mcp-prompts.js';
import { isResourceTool, LIST_RESOURCES, listResourcesText, resourceOutput, resourceSpecs, serverOf } from './mcp-resources.js';

export interface McpToolsOptions {
  /** The session's cwd: where the servers run. */
  cwd: string;
  logger: Logger;
  /** How long a server may take to start and list its tools before it is left out. */
  connectTimeoutMs: number;
  /** How long one call may take without a progress notification. */
  callTimeoutMs: number;
  /** How long one call may take in all, however much progress the server reports. */
  callMaxTotalMs: number;
  /** The most bytes of a call's output the model is given, as JSON in UTF-8 (longer output is cut, with a note): mcp-cut-text.ts. */
  outputLimit: number;
  /** troupe's version, told to the servers. */
  version: string;
  /** Called when a server's prompts (the session's slash commands) change while it runs. */
  onCommandsChanged?: () => void;
  /**
   * The session's directories (its cwd first) as they are now, told to servers that ask for the
   * client's roots; `rootsChanged()` tells them the list changed.
   */
  roots?: () => readonly string[];
  /**
   * Aborted when the session stops (closed, deleted, the agent exiting) while its servers start: a
   * server still starting is left out at once, its process stopped, rather than waited for until
   * `connectTimeoutMs`, which held up the agent's exit at stdin's end for as long.
   */
  signal?: AbortSignal;
}

/** A session's MCP tools; `close()` stops every server. */
export interface McpTools extends ToolHost {
  /** Whether a tool name is one of these (the host routes calls by it). */
  has(name: string): boolean;
  /** What each server came to: its tool count, or why it is left out. */
  readonly servers: { name: string; tools: number; error?: string }[];
  /** Why a server that started no longer serves (it exited), if it does not. */
  exited(name: string): string | undefined;
  /** The servers' prompts, as slash commands `mcp__<server>__<prompt>`. */
  commands(): McpCommand[];
  /**
   * The turn content a command makes: its input fills the prompt's arguments, the server makes the
   * messages. Rejects with `invalid_params` for an unknown command or a missing argument.
   */
  expand(command: string, input: string, signal?: AbortSignal): Promise<ContentBlock[]>;
  /** Tells every server that the session's roots changed (MCP `notifications/roots/list_changed`). */
  rootsChanged(): void;
  close(): Promise<void>;
}

interface Entry {
  server: Connected;
  tool: Tool;
  spec: ToolSpec;
}

interface Connected {
  name: string;
  client: Client;
  /** A stdio server's marker (MCP_SERVER_MARKER_ENV): what it started is found by it. */
  marker?: string;
  /** Why the server cannot serve calls any more (it exited), once it cannot. */
  gone?: string;
  /** Why the SDK stopped the server, when it did so for a message too long to read (OVERLONG). */
  overlong?: string;
  tools: ServerList<Tool>;
  prompts: ServerList<Prompt>;
}

const STOPPED_WHILE_STARTING = 'its session stopped while it started';

/**
 * The variable that marks a stdio server's process and everything it starts (src/core/marked-processes.ts).
 * The SDK stops the process it spawned, and only that one: a server started through a wrapper
 * (`npx`, `uvx`, `sh -c`, a script) may be that process's child, which does not die with it.
 */
export const MCP_SERVER_MARKER_ENV = 'TROUPE_MCP_SERVER_ID';
/** How long what a stopped server left running has between SIGTERM and SIGKILL. */
const STRAGGLER_GRACE_MS = 1000;

/** Model-facing tool names: vendors take [A-Za-z0-9_-], at most 64 characters. */
const MAX_NAME = 64;
const safe = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, '_');

export async function connectMcpTools(servers: readonly McpServerConfig[], opts: McpToolsOptions): Promise<McpTools> {
  const connected: Connected[] = [];
  const report: McpTools['servers'] = [];
  // The stops of the servers left out at start (they did not start in time, or did not list their
  // tools): under way in the background, waited for by `close()` (and by a start cut short), not by
  // the request that started them. A server that ignores its stdin's end and SIGTERM takes the SDK's
  // 2 s + 2 s, and what it started the straggler grace: until 2026-12-07 the request's answer waited
  // for all of it, a session/new with a server that timed out answered 4 to 5 s after the timeout.
  const stopping: Promise<void>[] = [];
  const stopInBackground = (server: Pick<Connected, 'client' | 'marker'>) => void stopping.push(stopServer(server).catch(() => undefined));
  const results = await Promise.allSettled(servers.map((s) => connect(s, opts, stopInBackground)));
  results.forEach((r, i) => {
    const name = servers[i]!.name;
    if (r.status === 'fulfilled') connected.push(r.value);
    else {
      const error = reasonOf(r.reason);
      report.push({ name, tools: 0, error });
      opts.logger.warn('an MCP server did not start; its tools are left out', { server: name, error });
    }
  });

  // A server's tools and prompts are kept per server (mcp-lists.ts); what the model and the client
  // see is made from them, each under a unique `mcp__<server>__<name>` (in the servers' order, so
  // that names stay put when one server's list changes).
  // A server that started but did not list its tools (in time, or at all) is left out as one that
  // did not start: stopped, its status failed with why (so that the same list given again starts
  // it again). Until 2026-12-06 it ran on, its status serving with 0 tools and no error.
  const unlisted = new Map<Connected, string>();
  const named = <T extends { name: string }, E>(items: (server: Connected) => readonly T[], make: (name: string, server: Connected, item: T) => E) => {
    const next = new Map<string, E>();
    for (const server of connected) {
      if (unlisted.has(server)) continue;
      for (const item of items(server)) {
        const name = uniqueName(`mcp__${safe(server.name)}__${safe(item.name)}`, next);
        next.set(name, make(name, server, item));
      }
    }
    return next;
  };
  let entries = new Map<string, Entry>();
  let specs: ToolSpec[] = [];
  const showTools = () => {
    entries = named((s) => s.tools.items, (name, server, tool) => ({ server, tool, spec: { name, description: describeTool(server.name, tool), inputSchema: tool.inputSchema as Record<string, unknown> } }));
    specs = [...entries.values()].map((e) => e.spec);
  };
  let prompts = new Map<string, PromptEntry>();
  const showPrompts = () => {
    prompts = named((s) => s.prompts.items, (name, server, prompt) => ({ client: server.client, server: server.name, prompt, command: commandOf(name, server.name, prompt) }));
  };
  // The lists at start are part of the start: a session stopping cuts them short as it does a
  // connect (a server that answers initialize but never tools/list held up a stop until the timeout).
  // Those a server asks for later (list_changed) are not: the start's signal means nothing then.
  const listToolsOf = (server: Connected, signal?: AbortSignal) => server.tools.refresh(() => listTools(server, opts.connectTimeoutMs, opts.logger, signal));
  const listPromptsOf = (server: Connected, signal?: AbortSignal) => server.prompts.refresh(() => listPrompts(server.client, opts.connectTimeoutMs, signal));
  const cannotList = (what: string, server: Connected, err: unknown) => opts.logger.warn(`cannot list the ${what} of an MCP server`, { server: server.name, error: failureOf(server, err) });
  let closing = false;
  // Whether the lists at start are shown: a listing taken before then is shown with them.
  let started = false;
  // A server listed again after it changed, one listing at a time (mcp-lists.ts): a notification
  // folded into a listing already queued shows nothing itself (that listing's own does), a failed
  // listing keeps what it had (and says so).
  const relisted = (what: string, server: Connected, show: () => void) => (taken: boolean) => {
    if (taken && started) show();
    else if (!taken) opts.logger.debug(`an MCP server said its ${what} list changed while a listing was queued; that listing covers it`, { server: server.name });
    return taken && started;
  };
  const keptAfter = (what: string, server: Connected) => (err: unknown) => {
    // Not for a server left out at start, or servers being stopped: their listings fail with them.
    if (!closing && !unlisted.has(server)) opts.logger.warn(`cannot list the ${what} of an MCP server again; its previous ${what} are kept`, { server: server.name, error: failureOf(server, err) });
    return false;
  };
  // A server may change its tools while it runs: the next model call sees its new list. And its
  // prompts: the client is told the new commands. Heard from before the lists at start are asked
  // for: a change said while they are answered is listed after them (the SDK drops a notification
  // nothing handles, and until 2026-12-07 one said then was lost, troupe keeping the list from
  // before it until the server's next).
  for (const server of connected) {
    server.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void listToolsOf(server).then(relisted('tool', server, showTools), keptAfter('tools', server)));
    server.client.setNotificationHandler(PromptListChangedNotificationSchema, () =>
      void listPromptsOf(server)
        .then(relisted('prompt', server, showPrompts), keptAfter('prompts', server))
        .then((taken) => taken && opts.onCommandsChanged?.()),
    );
  }
  await Promise.all(
    connected.flatMap((server) => [
      listToolsOf(server, opts.signal).catch((err) => void unlisted.set(server, failureOf(server, err))),
      listPromptsOf(server, opts.signal).catch((err) => cannotList('prompts', server, err)),
    ]),
  );
  if (opts.signal?.aborted) {
    closing = true;
    await Promise.all([...connected.map(stopServer), ...stopping]);
    throw new Error(STOPPED_WHILE_STARTING);
  }
  for (const [server, error] of unlisted) {
    opts.logger.warn('cannot list the tools of an MCP server', { server: server.name, error });
    server.gone = `the MCP server ${server.name} did not list its tools: ${error}`;
    report.push({ name: server.name, tools: 0, error: `did not list its tools: ${error}` });
  }
  for (const server of unlisted.keys()) stopInBackground(server);
  started = true;
  showTools();
  showPrompts();
  for (const server of connected) {
    if (unlisted.has(server)) continue;
    report.push({ name: server.name, tools: server.tools.items.length });
    server.client.onclose = () => {
      server.gone ??= `the MCP server ${server.name} has exited`;
      if (!closing) opts.logger.warn('an MCP server exited; its tools fail until the session is loaded again', { server: server.name });
    };
  }

  // Resources: two tools of their own while a server that has some serves (mcp-resources.ts).
  const resourceServers = () => connected.filter((s) => !s.gone && s.client.getServerCapabilities()?.resources);
  const runResourceTool = async (call: ToolCallRequest, ctx: ToolRunContext): Promise<ToolResult> => {
    const servers = resourceServers();
    const input = call.input;
    try {
      if (call.name === LIST_RESOURCES) {
        const one = serverOf(servers, input, false);
        return { output: cut(await listResourcesText(one ? [one] : servers, opts.callTimeoutMs, ctx.signal), opts.outputLimit, 'bytes'), isError: false };
      }
      const server = serverOf(servers, input, true)!;
      if (typeof input.uri !== 'string' || !input.uri) throw new TroupeError('invalid_params', '"uri" must be the URI of a resource.');
      const contents = await uncheckedRead(server.client, input.uri, { timeout: opts.callTimeoutMs, signal: ctx.signal });
      return { output: resourceOutput(contents, opts.outputLimit), isError: false };
    } catch (err) {
      if (err instanceof TroupeError) throw err;
      if (ctx.signal.aborted) return { output: 'Cancelled before it finished.', isError: true, errorCode: 'request_cancelled' };
      return { output: `The MCP server failed the request: ${reasonOf(err)}`, isError: true, errorCode: 'tool_failed' };
    }
  };

  const entryOf = (call: ToolCallRequest): Entry => {
    const entry = entries.get(call.name);
    if (!entry) throw new TroupeError('unknown_tool', `There is no tool named "${call.name}".`, { tool: call.name });
    return entry;
  };
  // The entry of a call whose input fits its tool's schema, as far as mcp-input-check.ts can tell:
  // describe checks it before the call is shown or asked for, run again (the list may have changed).
  const admit = (call: ToolCallRequest): Entry => {
    const entry = entryOf(call);
    const problem = inputProblem(entry.tool.inputSchema, call.input);
    if (problem) throw new TroupeError('invalid_params', `Invalid input for ${call.name}: ${problem}`, { tool: call.name });
    return entry;
  };

  return {
    servers: report,
    exited: (name) => connected.find((s) => s.name === name)?.gone,
    specs: () => {
      const withResources = resourceServers();
      return withResources.length ? [...specs, ...resourceSpecs(withResources)] : specs;
    },
    has: (name) => entries.has(name) || (isResourceTool(name) && resourceServers().length > 0),
    describe(call: ToolCallRequest): ToolDescription {
      if (isResourceTool(call.name)) {
        const { server, uri } = call.input;
        // Titles are printable, one line (titleText): the uri and server are the model's words.
        const from = typeof server === 'string' ? ` (${titleText(server)})` : '';
        const title = call.name === LIST_RESOURCES ? `List MCP resources${from}` : `Read ${typeof uri === 'string' ? titleText(uri, 200) : 'a resource'}${from}`;
        return { kind: 'read', title, locations: [], access: 'read' };
      }
      const { server, tool } = admit(call);
      // The server's own hint decides: it runs the user's code already, with the user's rights.
      const readOnly = tool.annotations?.readOnlyHint === true;
      return { kind: readOnly ? 'read' : 'other', title: `${titleText(tool.title ?? tool.annotations?.title ?? tool.name, 100)} (${titleText(server.name)})`, locations: [], access: readOnly ? 'read' : 'execute' };
    },
    async run(call: ToolCallRequest, ctx: ToolRunContext): Promise<ToolResult> {
      if (isResourceTool(call.name)) return runResourceTool(call, ctx);
      const { server, tool } = admit(call);
      if (server.gone) return { output: `${server.gone}; ${call.name} cannot run.`, isError: true, errorCode: 'tool_failed' };
      // Progress extends the wait for each next word from the server, never the call's whole time:
      // past callMaxTotalMs the call is cancelled (the server is told) and ends `tool_timeout`.
      // Until 2026-12-06 there was no such bound, and a server that kept reporting progress held
      // a call (and its turn) open until someone cancelled it, which in `troupe run` nobody does.
      const overall = new AbortController();
      const timer = setTimeout(() => overall.abort(new Error('the call took too long in all')), opts.callMaxTotalMs);
      try {
        // Its content is checked block by block (mcp-checked.ts), not by the SDK's one schema.
        const loose = await uncheckedCall(server.client, { name: tool.name, arguments: call.input }, {
          signal: AbortSignal.any([ctx.signal, overall.signal]),
          timeout: opts.callTimeoutMs,
          // The SDK asks the server for progress only with a callback, and only then can progress
          // extend the timeout.
          onprogress: progressShown(ctx),
          resetTimeoutOnProgress: true,
        });
        const output = callOutput(loose, opts.outputLimit);
        return loose.isError ? { output, isError: true, errorCode: 'tool_failed' } : { output, isError: false };
      } catch (err) {
        if (ctx.signal.aborted) return { output: 'Cancelled before it finished.', isError: true, errorCode: 'request_cancelled' };
        if (overall.signal.aborted) return { output: `The MCP server ${server.name} did not finish the call within ${opts.callMaxTotalMs} ms in all (its progress extends each wait for its next word, never the whole call), so troupe cancelled it.`, isError: true, errorCode: 'tool_timeout' };
        // A wait without progress that ran out is a timeout too, as run_command's is.
        const timedOut = err instanceof McpError && err.code === (ErrorCode.RequestTimeout as number);
        return { output: `The MCP server ${server.name} failed the call: ${failureOf(server, err)}`, isError: true, errorCode: timedOut ? 'tool_timeout' : 'tool_failed' };
      } finally {
        clearTimeout(timer);
      }
    },
    commands: () => [...prompts.values()].map((p) => p.command),
    async expand(command: string, input: string, signal?: AbortSignal): Promise<ContentBlock[]> {
      const entry = prompts.get(command);
      if (!entry) {
        const known = [...prompts.keys()].map((k) => `/${k}`).join(', ') || 'none';
        throw new TroupeError('invalid_params', `There is no command /${command} (the session's MCP commands: ${known}).`);
      }
      const args = promptArguments(command, entry.prompt.arguments ?? [], input);
      let result;
      try {
        result = await getPrompt(entry.client, { name: entry.prompt.name, arguments: args }, { timeout: opts.callTimeoutMs, ...(signal ? { signal } : {}) });
      } catch (err) {
        if (signal?.aborted) throw new TroupeError('request_cancelled', `/${command} was cancelled`);
        throw new TroupeError('tool_failed', `The MCP server ${entry.server} could not make the prompt /${command}: ${reasonOf(err)}`);
      }
      return promptContent(command, result);
    },
    rootsChanged() {
      for (const s of connected) if (!s.gone) void s.client.sendRootsListChanged().catch(() => undefined);
    },
    async close() {
      closing = true;
      await Promise.all([...connected.filter((s) => !unlisted.has(s)).map(stopServer), ...stopping]);
    },
  };
}

/** Connects to one server; one that does not start is handed to `stop` (not waited for) and rejects. */
async function connect(server: McpServerConfig, opts: McpToolsOptions, stop: (server: Pick<Connected, 'client' | 'marker'>) => void): Promise<Connected> {
  // Roots: the directories the session works in, which servers such as a filesystem one confine
  // themselves to.
  // They change when a client loads the session with other additional directories.
  const client = new Client({ name: 'troupe', version: opts.version }, { capabilities: { roots: { listChanged: true } } });
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: (opts.roots?.() ?? [opts.cwd]).map((dir) => ({ uri: pathToFileURL(dir).href, name: basename(dir) || dir })) }));
  const marker = server.transport === 'stdio' ? randomUUID() : undefined;
  const connected: Connected = { name: server.name, client, ...(marker ? { marker } : {}), tools: new ServerList(), prompts: new ServerList() };
  // A message longer than troupe reads (10 MB) stops the server: the SDK stops a stdio one itself,
  // troupe disconnects from an HTTP or SSE one (boundedFetch). What waited for an answer then fails
  // "Connection closed", or with the transport's error: the reason is kept to be told instead.
  // (Until 2026-12-06 the model read "Connection closed" and the status "has exited", the cause
  // hidden; until 2026-12-07 an HTTP or SSE server's message was read whole, at any size.)
  const overlong = (why: string) => {
    if (connected.overlong) return;
    connected.overlong = why;
    connected.gone ??= `the MCP server ${server.name} was ${why === OVERLONG ? 'stopped' : 'disconnected'}: ${why}`;
    opts.logger.warn('an MCP server sent a message longer than troupe reads; it is stopped', { server: server.name, limitBytes: STDIO_MAX_MESSAGE_BYTES });
  };
  client.onerror = (err) => {
    if (isOverlongMessage(err)) overlong(OVERLONG);
  };
  const transport = transportOf(server, opts.cwd, marker, () => {
    overlong(OVERLONG_REMOTE);
    void client.close().catch(() => undefined);
  });
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    await Promise.race([
      client.connect(transport, { timeout: opts.connectTimeoutMs }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`did not answer initialize within ${opts.connectTimeoutMs} ms`)), opts.connectTimeoutMs);
        onAbort = () => reject(new Error(STOPPED_WHILE_STARTING));
        if (opts.signal?.aborted) onAbort();
        else opts.signal?.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } catch (err) {
    stop({ client, marker });
    throw connected.overlong ? new Error(connected.overlong) : server.transport === 'stdio' ? startedInMissingDirectory(err, opts.cwd) : err;
  } finally {
    clearTimeout(timer);
    if (onAbort) opts.signal?.removeEventListener('abort', onAbort);
  }
  return connected;
}

/**
 * Why a request to a server failed: the SDK's error, or why the SDK stopped the server, or that it
 * exited while the request waited (the SDK fails such a request "Connection closed", after its
 * onclose has marked the server gone; until 2026-12-07 the model read just that).
 */
function failureOf(server: Connected, err: unknown): string {
  if (server.overlong) return server.overlong;
  if (server.gone && err instanceof McpError && err.code === (ErrorCode.ConnectionClosed as number)) return `it exited before it answered (${reasonOf(err)})`;
  return reasonOf(err);
}

/**
 * Stops a server: the SDK ends its process's stdin, then sends SIGTERM, then SIGKILL; then whatever
 * still carries its marker (what that process started) gets SIGTERM, and SIGKILL a second later.
 * Until 2026-12-06 a process a wrapper had started, if it did not exit at its stdin's end, outlived
 * its session for good.
 */
async function stopServer({ client, marker }: { client: Client; marker?: string | undefined }): Promise<void> {
  await client.close().catch(() => undefined);
  if (!marker || (await signalMarked(MCP_SERVER_MARKER_ENV, marker, 'SIGTERM')) === 0) return;
  await new Promise((resolve) => setTimeout(resolve, STRAGGLER_GRACE_MS));
  await signalMarked(MCP_SERVER_MARKER_ENV, marker, 'SIGKILL');
}

/** How a server's messages travel: the one thing that differs between servers. */
function transportOf(server: McpServerConfig, cwd: string, marker: string | undefined, onOverlong: () => void): Transport {
  switch (server.transport) {
    case 'stdio': {
      // The server's stderr is its log and joins troupe's own (stdout carries the protocol only).
      // The SDK gives it a safe subset of troupe's environment (never its model credentials) plus `env`,
      // and troupe its markers, which `env` cannot override: its own (stopServer), and the daemon's
      // mark of this session process, by which the daemon stops what a session process that died
      // left running. (Until 2026-12-06 a server was not given the latter: one that did not exit at
      // its stdin's end outlived a session process that was killed or crashed, for good.)
      const agentMark = process.env[AGENT_MARKER_ENV];
      const env = { ...server.env, ...(agentMark ? { [AGENT_MARKER_ENV]: agentMark } : {}), ...(marker ? { [MCP_SERVER_MARKER_ENV]: marker } : {}) };
      // The SDK's own limit, given explicitly so that its error is known for what it is (isOverlongMessage).
      return new StdioClientTransport({ command: server.command, args: server.args, env, cwd, stderr: 'inherit', maxBufferSize: STDIO_MAX_MESSAGE_BYTES });
    }
    case 'http':
      return new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers }, fetch: boundedFetch(STDIO_MAX_MESSAGE_BYTES, onOverlong) });
    case 'sse':
      // The SDK sends requestInit's headers with the event stream's GET as well as with every POST
      // (its EventSource fetches through them, and through `fetch`), so eventSourceInit needs none of its own.
      return new SSEClientTransport(new URL(server.url), { requestInit: { headers: server.headers }, fetch: boundedFetch(STDIO_MAX_MESSAGE_BYTES, onOverlong) });
  }
}

/**
 * Every page of a server's tool list (none if it has no tools). A tool MCP's schema refuses (no
 * name, an input schema that is not an object's) is left out, logged, and the others are kept.
 * Until 2026-12-06 the list was read with the SDK's `listTools`, which refuses a whole page for one
 * such tool, and also for a tool whose `outputSchema` its validator cannot compile (or two that
 * share an `$id`): a server lost all its tools to one, and its status said it served, with none.
 * (troupe does not check results against an `outputSchema`: the model reads their content.)
 */
function listTools({ name: server, client }: Connected, timeout: number, logger: Logger, signal?: AbortSignal): Promise<Tool[]> {
  if (!client.getServerCapabilities()?.tools) return Promise.resolve([]);
  // The first refusals of a listing are logged one by one, the rest counted in one line at its end.
  let refused = 0;
  return allPages(async (cursor) => {
    // A page too long is refused whole, before each is checked (and each one refused logged).
    const page = await uncheckedToolsPage(client, cursor, { timeout, ...(signal ? { signal } : {}) });
    const tools: Tool[] = [];
    for (const raw of page.tools) {
      const tool = checkItem(raw, ToolSchema);
      if ('data' in tool) tools.push(tool.data);
      else {
        if (++refused > LOGGED_REFUSALS) continue;
        const name = (raw as { name?: unknown } | null)?.name;
        const { issue, error } = tool as { issue?: z.core.$ZodIssue; error?: z.ZodError };
        logger.warn('an MCP server listed a tool MCP does not allow; it is left out', { server, tool: typeof name === 'string' ? name : null, error: 'tooMany' in tool ? tool.tooMany : issue ? `${issue.path.join('.') || 'tool'}: ${issue.message}` : String(error) });
      }
    }
    return { items: tools, nextCursor: page.nextCursor, listed: page.tools.length };
  }).finally(() => {
    if (refused > LOGGED_REFUSALS) logger.warn('an MCP server listed more tools MCP does not allow; they are left out', { server, notLogged: refused - LOGGED_REFUSALS });
  });
}

/** How many tools a listing refuses one log line each. */
const LOGGED_REFUSALS = 20;

function uniqueName(base: string, taken: ReadonlyMap<string, unknown>): string {
  const name = base.slice(0, MAX_NAME);
  if (!taken.has(name)) return name;
  for (let i = 2; ; i++) {
    const suffix = `_${i}`;
    const candidate = base.slice(0, MAX_NAME - suffix.length) + suffix;
    if (!taken.has(candidate)) return candidate;
  }
}

function describeTool(server: string, tool: Tool): string {
  const what = tool.description?.trim() || tool.title || tool.name;
  return `${what}\n(Tool "${tool.name}" of the MCP server "${server}".)`;
}
