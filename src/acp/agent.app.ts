/**
 * The ACP agent: every method troupe serves, on the SDK's app API (ACP v1, stable; `session/fork`
 * is registered with its own parser since it is an unstable method). Handlers translate between ACP
 * and the session engine; TroupeErrors become JSON-RPC errors with the string code in `data.code`.
 */
import * as acp from '@agentclientprotocol/sdk';
import * as z from 'zod';
import { ERROR_CODES, TroupeError } from '../core/errors.js';
import type { Logger } from '../core/ports.js';
import { assertKnownModel, defaultModel, missingCredential, resolveModel, usableModels } from '../providers/registry.js';
import type { TroupeConfig } from '../providers/config.js';
import { isSessionModeId } from '../tools/modes.js';
import { mcpServersOf } from '../tools/mcp/mcp-servers.js';
import { assertListCwd, keepsDirectories, requestedDirectories } from './session-directories.js';
import { kernelDirectory } from '../tools/kernel-directory.js';
import { asksLogSeqOf, daemonStoppingOf, indexedSeqOf, LOG_SEQ, marksReplayOf, modelOf, prompterOf, promptersOf, sentSeqOf, troupeMeta, turnIdOf } from './troupe-meta.js';
import { isValidSessionId, newTurnId } from '../core/ids.js';
import type { LiveSession, SessionHost } from './session-host.js';
import type { LineWriter } from './session-replay.js';
import { commandsUpdate, configOptions, cwdMismatch, modeState, sameCwd, SLASH_COMMANDS } from './session-options.js';
import { logLockHolder } from '../store/log-lock.js';
import { sessionLogPath } from '../store/paths.js';
import { authenticateRefusal, initializeResult } from './capabilities.js';
import { guard } from './guarded-handler.js';
import { WaitingPrompts } from './waiting-prompts.js';
import { clientOffer } from './client-offer.js';
import { sessionInfo } from './session-info.js';
import { mcpCommand, slashCommand, toContent } from './prompt-content.js';

export interface AgentOptions {
  /**
   * The session host, opened on first use: `initialize` never waits for it, so an editor sees the
   * agent answer before the session machinery (engine, store, tools) has even been loaded.
   */
  openHost(): Promise<SessionHost>;
  env: NodeJS.ProcessEnv;
  config: TroupeConfig;
  logger: Logger;
  /**
   * Where session logs live. With it, `session/load` of a session not open in this process replays
   * the log file itself and answers before the session machinery is loaded; the engine opens
   * right after the response (a prompt waits for it).
   */
  sessionsDir?: string;
  /** Queues ready-made NDJSON lines on the agent's output, behind everything sent so far. */
  writeLines?: LineWriter;
  /**
   * Run by a daemon (`--supervised`): the first request that opens a session may carry the client's
   * capabilities in `_meta.troupe.clientCapabilities`, because a pooled child is initialized before
   * any client is known (spec/daemon.md §Warm pool). Ignored otherwise.
   */
  supervised?: boolean;
  /**
   * Aborted when the client's input ends (request-gate.ts): the requests in flight are still
   * answered, but every turn is cancelled, running or not yet started (a prompt is answered
   * `cancelled`), and no MCP server start is waited for.
   */
  inputEnded?: AbortSignal;
}

const sessionIdOnly = z.object({ sessionId: z.string() }).passthrough();
const clientCapsParams = z.object({ clientCapabilities: z.record(z.string(), z.unknown()) }).passthrough();
const steerParams = z.object({ sessionId: z.string(), expectedTurnId: z.string(), prompt: z.array(z.any()).min(1) }).passthrough();
const forkParams = z
  .object({ sessionId: z.string(), cwd: z.string(), mcpServers: z.array(z.any()).optional(), additionalDirectories: z.array(z.string()).optional() })
  .passthrough();

/** How long after `initialize` the session machinery starts loading if no request asked for it. */
const MACHINERY_DELAY_MS = 20;

export function createAgentApp(opts: AgentOptions): acp.AgentApp {
  const { env, config, logger } = opts;
  const guarded = guard(logger);
  // The connection's client and what it advertised: given to the host when it opens (or again on a
  // repeated initialize).
  let peer: { client: acp.AgentContext; caps: acp.ClientCapabilities } | undefined;
  let opened: Promise<SessionHost> | undefined;
  let ready: SessionHost | undefined;
  const host = (): Promise<SessionHost> =>
    (opened ??= opts.openHost().then(
      (h) => {
        if (peer) h.attach(peer.client, peer.caps);
        if (opts.inputEnded?.aborted) h.endOfInput();
        return (ready = h);
      },
      (err: unknown) => {
        opened = undefined; // tried again by the next request (openHost keeps no failure either)
        throw err;
      },
    ));
  let machineryTimer: NodeJS.Timeout | undefined;
  opts.inputEnded?.addEventListener('abort', () => ready?.endOfInput(), { once: true });
  /**
   * The loads of a session in progress, by session: each load starts once the ones before it are
   * done, and every other request for the session (sessionOf, close, delete, fork) waits for the
   * last one, so that whatever it makes the session send comes after the history. Settled once the
   * load has answered (or failed) and the engine it opens after its response is open. Registered
   * as the request arrives, before its first await: until 2026-12-07 only a replay from the log file
   * was waited for, and a request behind a load that needed the engine (a crash-repaired log) could
   * open the session first, and sent the repaired turn's end before the history, then in it again.
   */
  const loading = new Map<string, Promise<void>>();
  const inLoadOrder = <T>(sessionId: string, load: () => Promise<{ response: T; opened?: Promise<void> }>): Promise<T> => {
    const run = (loading.get(sessionId) ?? Promise.resolve()).then(load);
    const done = run.then((r) => r.opened, () => undefined).then(() => undefined);
    loading.set(sessionId, done);
    void done.then(() => loading.get(sessionId) === done && loading.delete(sessionId));
    return run.then((r) => r.response);
  };
  const replayModule = () => (replayLoaded ??= import('./session-replay.js'));
  let replayLoaded: Promise<typeof import('./session-replay.js')> | undefined;
  const openInBackground = () => void host().catch((err) => logger.error('cannot open the session store', { error: String(err) }));
  // The app's environment and config do not change: nor does the list their keys make usable.
  let usable: ReturnType<typeof usableModels> | undefined;
  const models = () => (usable ??= usableModels(env, config));
  const projectionCaps = () => clientOffer(peer?.caps);

  const takeClientCaps = (p: { _meta?: unknown }) => useClientCaps(troupeMeta(p)?.clientCapabilities);
  /** A daemon's word on what its clients offer (a request's `_meta.troupe`, or `_troupe/client_capabilities`). */
  const useClientCaps = (caps: unknown) => {
    if (!opts.supervised || !peer || !caps || typeof caps !== 'object' || Array.isArray(caps)) return;
    peer = { client: peer.client, caps: caps as acp.ClientCapabilities };
    // Not open yet: the host takes `peer` as it is when it opens.
    ready?.attach(peer.client, peer.caps);
  };

  const sessionState = (live: LiveSession) => {
    const conv = live.engine.conversation;
    return { modes: modeState(conv.mode), configOptions: configOptions({ mode: conv.mode, model: conv.model }, models()) };
  };
  /**
   * session/load of a session this process has not opened: replayed from its log file without the
   * session machinery, which then opens the engine after the response has gone (`opened`). `undefined`
   * when the log needs the engine first (crash repair, a torn tail) or is not a loadable session.
   * Runs in the load's turn (inLoadOrder).
   */
  const loadFromLog = async (client: acp.AgentContext, p: acp.LoadSessionRequest, mcp: ReturnType<typeof mcpServersOf>, dirs: string[] | undefined) => {
    const sessionsDir = opts.sessionsDir;
    const id = p.sessionId;
    if (!sessionsDir || !isValidSessionId(id)) return undefined;
    // Open here, or written by another process: the engine's open answers (that one, session_locked).
    // Deleted, with a file put back at its log's place, once the index is open (after the editor's
    // first session/list): the host answers session_not_found. Before that the copy is replayed and
    // the load answered; the engine's open then refuses it, and every prompt is session_not_found
    // (spec/event-log.md §6): checking here would make every first load wait for the index.
    if (ready?.isOpen(id) || ready?.deletedForGood(id) || logLockHolder(sessionLogPath(sessionsDir, id)) !== undefined) return undefined;
    clearTimeout(machineryTimer); // opened below, after the response
    const { replayLogFile, UpdateReplay } = await replayModule();
    const summary = await replayLogFile(sessionLogPath(sessionsDir, id), id, p.cwd, new UpdateReplay(client, projectionCaps(), opts.writeLines, marksReplayOf(p)));
    if (!summary) return undefined;
    // The engine opens once this response has gone (the writer flushes first, on this same turn),
    // and its MCP servers start; a request for the session waits for both. Their prompts are told
    // then (the commands announced with the response had only troupe's own).
    const opened = new Promise<void>((resolve) =>
      setImmediate(() =>
        void host()
          .then(async (h) => {
            const live = await h.get(id, indexedSeqOf(p));
            live.repaired = undefined; // the replay showed the log's open turn as ended
            if (dirs) h.useDirectories(live, dirs);
            await h.useMcpServers(id, live.engine.conversation.cwd, mcp);
            if (h.commands(id).length > SLASH_COMMANDS.length) h.announceCommands(id);
          })
          .catch((err) => logger.error('cannot open the loaded session', { sessionId: id, error: String(err) }))
          .finally(resolve),
      ),
    );
    return { response: { modes: modeState(summary.mode), configOptions: configOptions({ mode: summary.mode, model: summary.model }, models()) }, opened };
  };
  /**
   * Sent once the response that made the session known has left (next turn of the loop): troupe's
   * commands, and the prompts of the session's MCP servers once they have started (`h`).
   */
  const announceCommands = (client: acp.AgentContext, sessionId: string, h?: SessionHost) =>
    setImmediate(() => {
      void client.notify('session/update', commandsUpdate(sessionId, h ? h.commands(sessionId) : SLASH_COMMANDS)).catch(() => undefined);
    });
  /**
   * A session for a request, once the loads of it in progress are done (inLoadOrder): what the
   * engine emits from then on comes after their history. `replaying`: for the load in its turn.
   */
  const sessionOf = async (h: SessionHost, sessionId: string, opts: { replaying?: boolean; sentSeq?: number; prompters?: Map<string, number>; indexedSeq?: number } = {}): Promise<LiveSession> => {
    if (!opts.replaying) await loading.get(sessionId);
    const live = await h.get(sessionId, opts.indexedSeq);
    // What the open appended (a crashed turn's end) goes to the client first, unless its replay shows it.
    if (opts.replaying) live.repaired = undefined;
    // (No await on every request for nothing: a repair, or a daemon's resume after a crash.)
    else if (live.repaired || opts.sentSeq !== undefined) await h.updates.sendCatchUp(live, opts.sentSeq, opts.prompters);
    return live;
  };
  const waitingPrompts = new WaitingPrompts();
  /** The additional directories a session/load or resume asks for (checked), or `undefined`: keep them (the daemon's own resume). */
  const directoriesOf = (p: { cwd: string; additionalDirectories?: unknown; _meta?: unknown }) =>
    keepsDirectories(p) ? undefined : requestedDirectories(p.cwd, p.additionalDirectories);
  const assertCwd = (live: LiveSession, cwd: string) => {
    if (!sameCwd(live.engine.conversation.cwd, cwd)) throw cwdMismatch(live.engine.sessionId, live.engine.conversation.cwd);
  };
  /**
   * Refuses a model a session is switched to, or made with (session/new's `_meta.troupe.model`), now
   * rather than at its next prompt (the session keeps its model): a model no provider has, and a
   * provider with no credential, which stays so here.
   */
  const assertUsableModel = (model: string) => {
    assertKnownModel(model, env, config);
    const missing = missingCredential(model, env, config);
    if (missing) throw new TroupeError('provider_auth', `cannot use ${model}: ${missing}`, { model });
  };
  const configure = async (client: acp.AgentContext, h: SessionHost, live: LiveSession, change: { mode?: string; model?: string }) => {
    if (change.mode !== undefined && !isSessionModeId(change.mode)) throw new TroupeError('invalid_params', `unknown mode '${change.mode}' (default, accept-edits, plan, bypass)`);
    if (change.model !== undefined) assertUsableModel(change.model);
    live.engine.configure(change);
    const options = sessionState(live).configOptions;
    await client.notify('session/update', { sessionId: live.engine.sessionId, update: { sessionUpdate: 'config_option_update', configOptions: options } });
    return options;
  };

  return acp
    .agent({ name: 'troupe' })
    .onRequest('initialize', ({ params, client }) => {
      peer = { client, caps: params.clientCapabilities ?? {} };
      // (A store that fails to open answers the requests that wait for it; nothing to do here then.)
      if (opened) void opened.then((h) => peer && h.attach(peer.client, peer.caps), () => undefined);
      // After this answer: the small replay module at once (a `session/load` is the likely next
      // request), the session machinery once no request has needed it for a moment. A request that
      // needs the machinery loads it at once; a `session/load` replays without it (loading it in
      // between would only delay the replay), and opens it after its response.
      // (Two turns of the loop: the first flushes this answer.)
      if (opts.sessionsDir) setImmediate(() => setImmediate(() => void replayModule().catch(() => undefined)));
      machineryTimer = setTimeout(openInBackground, MACHINERY_DELAY_MS).unref();
      const images = (() => {
        try {
          return resolveModel(defaultModel(env, config), env, config).capabilities.images;
        } catch {
          return false;
        }
      })();
      return initializeResult(images);
    })
    .onRequest(
      'authenticate',
      guarded('authenticate', async (p: acp.AuthenticateRequest) => {
        throw authenticateRefusal(p.methodId);
      }),
    )
    .onRequest(
      'session/new',
      guarded('session/new', async (p: acp.NewSessionRequest, { client, signal }) => {
        takeClientCaps(p);
        const mcp = mcpServersOf(p.mcpServers);
        const h = await host();
        // Its servers start first: withdrawn meanwhile (`$/cancel_request`), it is answered -32800 at
        // once and leaves no session (SessionHost.create).
        // A model asked for with the session (`troupe run --model`) is its model from the start: the
        // default, refused when no turn could use it (TROUPE_MODEL=scripted/nope), is not consulted.
        const model = modelOf(p);
        if (model !== undefined) assertUsableModel(model);
        const live = await h.create({ cwd: p.cwd, additionalDirectories: p.additionalDirectories ?? [], ...(model === undefined ? {} : { model }) }, [], { servers: mcp, signal }); // checked there
        announceCommands(client, live.engine.sessionId, h);
        return { sessionId: live.engine.sessionId, ...sessionState(live) };
      }),
    )
    .onRequest(
      'session/load',
      guarded('session/load', async (p: acp.LoadSessionRequest, { client, signal }) => {
        takeClientCaps(p);
        const mcp = mcpServersOf(p.mcpServers);
        const dirs = directoriesOf(p);
        return inLoadOrder(p.sessionId, async () => {
          const fromLog = await loadFromLog(client, p, mcp, dirs);
          if (fromLog) {
            announceCommands(client, p.sessionId);
            return fromLog;
          }
          // Loaded first: no wait comes between the session's open and the replay's start, in which
          // what it emits would go out before the history, then again in it.
          const { UpdateReplay } = await replayModule();
          const h = await host();
          const live = await sessionOf(h, p.sessionId, { replaying: true, indexedSeq: indexedSeqOf(p) });
          assertCwd(live, p.cwd);
          if (dirs) h.useDirectories(live, dirs);
          await h.updates.replay(live, new UpdateReplay(client, h.projectionCaps, opts.writeLines, marksReplayOf(p)));
          // Withdrawn while its servers start: answered -32800 at once, and they are stopped.
          await h.useMcpServers(p.sessionId, live.engine.conversation.cwd, mcp, signal);
          announceCommands(client, p.sessionId, h);
          return { response: sessionState(live) };
        });
      }),
    )
    .onRequest(
      'session/resume',
      guarded('session/resume', async (p: acp.ResumeSessionRequest, { client, signal }) => {
        takeClientCaps(p);
        const mcp = p.mcpServers === undefined ? undefined : mcpServersOf(p.mcpServers);
        const dirs = directoriesOf(p);
        const h = await host();
        const sentSeq = sentSeqOf(p);
        const prompters = promptersOf(p);
        const live = await sessionOf(h, p.sessionId, { indexedSeq: indexedSeqOf(p), ...(sentSeq === undefined ? {} : { sentSeq, ...(prompters ? { prompters } : {}) }) });
        // Read at once: a prompt sent after this resume may append once this handler awaits again.
        const logSeq = asksLogSeqOf(p) ? live.log.lastSeq() : undefined;
        assertCwd(live, p.cwd);
        if (dirs) h.useDirectories(live, dirs);
        // Without `mcpServers` the session keeps the servers it has.
        if (mcp) await h.useMcpServers(p.sessionId, live.engine.conversation.cwd, mcp, signal);
        announceCommands(client, p.sessionId, h);
        return { ...sessionState(live), ...(logSeq === undefined ? {} : { _meta: { troupe: { [LOG_SEQ]: logSeq } } }) };
      }),
    )
    .onRequest(
      'session/list',
      guarded('session/list', async (p: acp.ListSessionsRequest) => {
        assertListCwd(p.cwd);
        const h = await host();
        // Logs changed while no agent ran are read again at its start: listed as they are, not as the index had them.
        await h.logsRechecked();
        const { index } = h;
        // Another agent on this home (a second editor window) may have made sessions since.
        await index.refreshIfChanged();
        const page = index.list({ ...(p.cwd ? { cwd: kernelDirectory(p.cwd) } : {}), ...(p.cursor ? { cursor: p.cursor } : {}), limit: 50 });
        return {
          sessions: page.sessions.map(sessionInfo),
          ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
        };
      }),
    )
    .onRequest(
      'session/close',
      guarded('session/close', async (p: acp.CloseSessionRequest) => {
        // Closing cancels the session's work, as session/cancel does.
        waitingPrompts.cancel(p.sessionId);
        const h = await host();
        await loading.get(p.sessionId);
        if (!h.isOpen(p.sessionId) && !h.index.get(p.sessionId)) throw new TroupeError('session_not_found', `no session ${p.sessionId}`, { sessionId: p.sessionId });
        await h.unload(p.sessionId);
        return {};
      }),
    )
    .onRequest(
      'session/delete',
      guarded('session/delete', async (p: acp.DeleteSessionRequest) => {
        waitingPrompts.cancel(p.sessionId);
        const h = await host();
        await loading.get(p.sessionId);
        await h.delete(p.sessionId);
        return {};
      }),
    )
    .onRequest(
      'session/fork',
      forkParams,
      guarded('session/fork', async (p: z.infer<typeof forkParams>, { client, signal }) => {
        const mcp = mcpServersOf(p.mcpServers);
        const h = await host();
        await loading.get(p.sessionId);
        // As session/new: withdrawn while its servers start, it leaves no fork.
        const live = await h.fork(p.sessionId, p.cwd, p.additionalDirectories ?? [], { servers: mcp, signal });
        announceCommands(client, live.engine.sessionId, h);
        return { sessionId: live.engine.sessionId, ...sessionState(live) };
      }),
    )
    .onRequest(
      'session/set_mode',
      guarded('session/set_mode', async (p: acp.SetSessionModeRequest, { client }) => {
        const h = await host();
        await configure(client, h, await sessionOf(h, p.sessionId), { mode: p.modeId });
        return {};
      }),
    )
    .onRequest(
      'session/set_config_option',
      guarded('session/set_config_option', async (p: acp.SetSessionConfigOptionRequest, { client }) => {
        const h = await host();
        const live = await sessionOf(h, p.sessionId);
        const value = (p as { value: unknown }).value;
        if (typeof value !== 'string') throw new TroupeError('invalid_params', `config option ${p.configId} takes a string value`);
        if (p.configId === 'mode') return { configOptions: await configure(client, h, live, { mode: value }) };
        if (p.configId === 'model') return { configOptions: await configure(client, h, live, { model: value }) };
        throw new TroupeError('invalid_params', `unknown config option '${p.configId}' (mode, model)`);
      }),
    )
    .onRequest(
      'session/prompt',
      guarded('session/prompt', async (p: acp.PromptRequest, { client, signal }) => {
        const { waiting, done } = waitingPrompts.add(p.sessionId);
        // Cancelled by session/cancel, or this request withdrawn by `$/cancel_request`, before its
        // prompt reached the engine (until 2026-12-06 the second was not checked: a slash command
        // withdrawn while its session opened still switched the mode or model, or compacted).
        // (Or the client's input ended: a prompt that has not reached its engine yet never runs.)
        const cancelled = () => waiting.cancelled || signal.aborted || Boolean(opts.inputEnded?.aborted);
        let h: SessionHost;
        let live: LiveSession;
        let handle: ReturnType<LiveSession['engine']['prompt']>;
        try {
          h = await host();
          live = await sessionOf(h, p.sessionId);
          // Cancelled while its session opened: a slash command does not run either (it would switch
          // the mode or model, or compact, and answer end_turn to a prompt the client cancelled).
          if (cancelled()) return { stopReason: 'cancelled' };
          const command = slashCommand(p.prompt);
          if (command?.name === 'compact') {
            // session/cancel stops the compaction, and so does `$/cancel_request` of this request
            // (then only it: prompts sent behind it go on); the prompt is answered cancelled then (ACP).
            const outcome = await live.engine.compactNow(signal);
            return { stopReason: outcome === 'cancelled' || cancelled() ? 'cancelled' : 'end_turn' };
          }
          if (command) {
            await configure(client, h, live, { [command.name]: command.arg });
            return { stopReason: 'end_turn' };
          }
          const model = resolveModel(live.engine.conversation.model, env, config);
          // An MCP server's prompt: the server makes the turn's content from the command's input.
          const mcp = mcpCommand(p.prompt);
          const blocks = mcp ? [...((await h.expandMcpCommand(p.sessionId, mcp.name, mcp.input, signal)) as acp.ContentBlock[]), ...mcp.rest] : p.prompt;
          const content = toContent(blocks, { images: model.capabilities.images, model: model.id });
          if (cancelled()) return { stopReason: 'cancelled' };
          // The client is not sent its own prompt back (SessionUpdates.prompted). The turn is named
          // here because a prompt to an idle session starts its turn within engine.prompt; the daemon
          // names it (troupe-meta.ts TURN_ID).
          // One the session already had would make two turns of one id; such a prompt gets its own.
          const named = turnIdOf(p);
          const turnId = named !== undefined && named > live.engine.conversation.latestTurnId ? named : newTurnId();
          h.updates.promptedBy(turnId, prompterOf(p));
          try {
            handle = live.engine.prompt(content, turnId);
          } catch (err) {
            h.updates.promptAnswered(turnId);
            throw err;
          }
        } catch (err) {
          // Cancelled (or its session closed) while it waited: that is its answer, whatever came of the wait.
          if (cancelled()) return { stopReason: 'cancelled' };
          throw err;
        } finally {
          done();
        }
        // `$/cancel_request` for this request: this prompt ends cancelled (and is answered so), the
        // session's other prompts go on, as session/cancel would not have them.
        // (It may have come already, while the session was being found.)
        const withdraw = () => live.engine.withdraw(handle.promptId);
        if (signal.aborted) withdraw();
        else signal.addEventListener('abort', withdraw, { once: true });
        const r = await handle.result.finally(() => {
          signal.removeEventListener('abort', withdraw);
          h.updates.promptAnswered(handle.turnId);
        });
        const meta = { _meta: { troupe: { turnId: r.turnId, steps: r.steps } } };
        if (r.stopReason !== 'error') return { stopReason: r.stopReason, ...meta };
        const code = (r.errorCode && r.errorCode in ERROR_CODES ? r.errorCode : 'internal_error') as keyof typeof ERROR_CODES;
        const retry = r.retryAfterMs !== undefined ? { retryAfterMs: r.retryAfterMs } : {};
        const vendor = r.vendorMessage !== undefined ? { vendorMessage: r.vendorMessage } : {};
        throw new TroupeError(code, r.message ?? `the turn failed: ${code}`, { sessionId: p.sessionId, turnId: r.turnId, ...retry, ...vendor });
      }),
    )
    // The daemon's clients attached to the session changed, and with them what it can serve
    // (spec/daemon.md §Relay): the session's tools ask the offer at each call.
    .onNotification('_troupe/client_capabilities', clientCapsParams, ({ params }) => useClientCaps(params.clientCapabilities))
    .onNotification('session/cancel', ({ params }) => {
      // At once, not after the session has finished opening: what is sent after this cancel is not cancelled.
      waitingPrompts.cancel(params.sessionId);
      // What the engine has (no session is open before the host is).
      ready?.cancel(params.sessionId, daemonStoppingOf(params) ? 'the daemon is shutting down' : undefined);
    })
    .onRequest(
      '_troupe/steer',
      steerParams,
      guarded('_troupe/steer', async (p: z.infer<typeof steerParams>) => {
        // A steer is for the turn running now: it does not wait for a load of the session in progress
        // (its replay, its MCP servers), after which that turn may have ended. What the steer makes
        // the session send meanwhile is held behind the replay (SessionUpdates.replay).
        const live = ready?.busy(p.sessionId) ?? (await sessionOf(await host(), p.sessionId));
        const model = resolveModel(live.engine.conversation.model, env, config);
        return live.engine.steer(p.expectedTurnId, toContent(p.prompt as acp.ContentBlock[], { images: model.capabilities.images, model: model.id }));
      }),
    )
    .onRequest(
      '_troupe/session_state',
      sessionIdOnly,
      guarded('_troupe/session_state', async (p: z.infer<typeof sessionIdOnly>) => {
        const h = await host();
        const live = await sessionOf(h, p.sessionId);
        const conv = live.engine.conversation;
        return { sessionId: p.sessionId, ...live.engine.state(), mode: conv.mode, model: conv.model, title: conv.title ?? null, mcpServers: h.mcpStatus(p.sessionId) };
      }),
    );
}
