/**
 * The ACP agent: every method troupe serves, on the SDK's app API (ACP v1, stable; `session/fork`
 * is registered with its own parser since it is an unstable method). Handlers translate between ACP
 * and the session engine; TroupeErrors become JSON-RPC errors with the string code in `data.code`.
 */
import * as acp from '@agentclientprotocol/sdk';
import { z } from 'zod';
import { ERROR_CODES, isTroupeError, TroupeError } from '../core/errors.js';
import type { Logger } from '../core/ports.js';
import { defaultModel, resolveModel } from '../providers/registry.js';
import type { TroupeConfig } from '../providers/config.js';
import { isSessionModeId } from '../tools/modes.js';
import type { LiveSession, SessionHost } from './session-host.js';
import { configOptions, modeState, SLASH_COMMANDS } from './session-options.js';
import { initializeResult } from './capabilities.js';
import { slashCommand, toContent } from './prompt-content.js';

export interface AgentOptions {
  /**
   * The session host, opened on first use: `initialize` never waits for it, so an editor sees the
   * agent answer before the session machinery (engine, store, tools) has even been loaded.
   */
  openHost(): Promise<SessionHost>;
  env: NodeJS.ProcessEnv;
  config: TroupeConfig;
  logger: Logger;
}

/** TroupeError → JSON-RPC error (session_not_found keeps ACP's -32002 with data.sessionId). */
function toRpc(err: unknown): unknown {
  if (!isTroupeError(err)) return err;
  return new acp.RequestError(ERROR_CODES[err.code].rpc, err.message, { ...err.data, code: err.code });
}

type Handler<P, R> = (params: P, ctx: { client: acp.AgentContext; signal: AbortSignal }) => Promise<R>;

/** Logs the request at debug level and turns a TroupeError into its JSON-RPC error. */
function guard(logger: Logger) {
  return <P, R>(method: string, fn: Handler<P, R>) =>
    async (ctx: { params: P; client: acp.AgentContext; signal: AbortSignal }): Promise<R> => {
      const started = Date.now();
      try {
        const result = await fn(ctx.params, ctx);
        logger.debug(method, { ms: Date.now() - started });
        return result;
      } catch (err) {
        logger.debug(`${method} failed`, { ms: Date.now() - started, code: isTroupeError(err) ? err.code : undefined, error: String(err) });
        throw toRpc(err);
      }
    };
}

const sessionIdOnly = z.object({ sessionId: z.string() }).passthrough();
const steerParams = z.object({ sessionId: z.string(), expectedTurnId: z.string(), prompt: z.array(z.any()).min(1) }).passthrough();
const forkParams = z
  .object({ sessionId: z.string(), cwd: z.string(), mcpServers: z.array(z.any()).optional(), additionalDirectories: z.array(z.string()).optional() })
  .passthrough();

export function createAgentApp(opts: AgentOptions): acp.AgentApp {
  const { env, config, logger } = opts;
  const guarded = guard(logger);
  // The connection's client and what it advertised: given to the host when it opens (or again on a
  // repeated initialize).
  let peer: { client: acp.AgentContext; caps: acp.ClientCapabilities } | undefined;
  let opened: Promise<SessionHost> | undefined;
  const host = (): Promise<SessionHost> =>
    (opened ??= opts.openHost().then((h) => {
      if (peer) h.attach(peer.client, peer.caps);
      return h;
    }));

  const sessionState = (h: SessionHost, live: LiveSession) => {
    const conv = live.engine.conversation;
    return { modes: modeState(conv.mode), configOptions: configOptions({ mode: conv.mode, model: conv.model }, h.models()) };
  };
  /** Sent once the response that made the session known has left (next turn of the loop). */
  const announceCommands = (client: acp.AgentContext, sessionId: string) =>
    setImmediate(() => {
      void client
        .notify('session/update', { sessionId, update: { sessionUpdate: 'available_commands_update', availableCommands: SLASH_COMMANDS } })
        .catch(() => undefined);
    });
  const sameCwd = (live: LiveSession, cwd: string) => {
    if (live.engine.conversation.cwd !== cwd) {
      throw new TroupeError('invalid_params', `session ${live.engine.sessionId} works in ${live.engine.conversation.cwd}; a session's cwd never changes (another directory means another session)`);
    }
  };
  const configure = async (client: acp.AgentContext, h: SessionHost, live: LiveSession, change: { mode?: string; model?: string }) => {
    if (change.mode !== undefined && !isSessionModeId(change.mode)) throw new TroupeError('invalid_params', `unknown mode '${change.mode}' (default, accept-edits, plan, bypass)`);
    live.engine.configure(change);
    const options = sessionState(h, live).configOptions;
    await client.notify('session/update', { sessionId: live.engine.sessionId, update: { sessionUpdate: 'config_option_update', configOptions: options } });
    return options;
  };

  return acp
    .agent({ name: 'troupe' })
    .onRequest('initialize', ({ params, client }) => {
      peer = { client, caps: params.clientCapabilities ?? {} };
      if (opened) void opened.then((h) => peer && h.attach(peer.client, peer.caps));
      // Load the session machinery right after this answer has gone out, not before it.
      setImmediate(() => void host().catch((err) => logger.error('cannot open the session store', { error: String(err) })));
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
      'session/new',
      guarded('session/new', async (p: acp.NewSessionRequest, { client }) => {
        if (p.mcpServers.length) logger.warn('MCP servers are not supported yet; ignoring them', { count: p.mcpServers.length });
        const h = await host();
        const live = await h.create({ cwd: p.cwd, additionalDirectories: p.additionalDirectories ?? [] });
        announceCommands(client, live.engine.sessionId);
        return { sessionId: live.engine.sessionId, ...sessionState(h, live) };
      }),
    )
    .onRequest(
      'session/load',
      guarded('session/load', async (p: acp.LoadSessionRequest, { client }) => {
        const h = await host();
        const live = await h.get(p.sessionId);
        sameCwd(live, p.cwd);
        await h.replay(live);
        announceCommands(client, p.sessionId);
        return sessionState(h, live);
      }),
    )
    .onRequest(
      'session/resume',
      guarded('session/resume', async (p: acp.ResumeSessionRequest, { client }) => {
        const h = await host();
        const live = await h.get(p.sessionId);
        sameCwd(live, p.cwd);
        announceCommands(client, p.sessionId);
        return sessionState(h, live);
      }),
    )
    .onRequest(
      'session/list',
      guarded('session/list', async (p: acp.ListSessionsRequest) => {
        const page = (await host()).index.list({ ...(p.cwd ? { cwd: p.cwd } : {}), ...(p.cursor ? { cursor: p.cursor } : {}), limit: 50 });
        return {
          sessions: page.sessions.map((s) => ({
            sessionId: s.id,
            cwd: s.cwd,
            ...(s.title ? { title: s.title } : {}),
            updatedAt: new Date(s.updatedAt).toISOString(),
          })),
          ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
        };
      }),
    )
    .onRequest(
      'session/close',
      guarded('session/close', async (p: acp.CloseSessionRequest) => {
        const h = await host();
        if (!h.isLive(p.sessionId) && !h.index.get(p.sessionId)) throw new TroupeError('session_not_found', `no session ${p.sessionId}`, { sessionId: p.sessionId });
        await h.unload(p.sessionId);
        return {};
      }),
    )
    .onRequest(
      'session/delete',
      guarded('session/delete', async (p: acp.DeleteSessionRequest) => {
        await (await host()).delete(p.sessionId);
        return {};
      }),
    )
    .onRequest(
      'session/fork',
      forkParams,
      guarded('session/fork', async (p: z.infer<typeof forkParams>, { client }) => {
        const h = await host();
        const live = await h.fork(p.sessionId, p.cwd, p.additionalDirectories ?? []);
        announceCommands(client, live.engine.sessionId);
        return { sessionId: live.engine.sessionId, ...sessionState(h, live) };
      }),
    )
    .onRequest(
      'session/set_mode',
      guarded('session/set_mode', async (p: acp.SetSessionModeRequest, { client }) => {
        const h = await host();
        await configure(client, h, await h.get(p.sessionId), { mode: p.modeId });
        return {};
      }),
    )
    .onRequest(
      'session/set_config_option',
      guarded('session/set_config_option', async (p: acp.SetSessionConfigOptionRequest, { client }) => {
        const h = await host();
        const live = await h.get(p.sessionId);
        const value = (p as { value: unknown }).value;
        if (typeof value !== 'string') throw new TroupeError('invalid_params', `config option ${p.configId} takes a string value`);
        if (p.configId === 'mode') return { configOptions: await configure(client, h, live, { mode: value }) };
        if (p.configId === 'model') return { configOptions: await configure(client, h, live, { model: value }) };
        throw new TroupeError('invalid_params', `unknown config option '${p.configId}' (mode, model)`);
      }),
    )
    .onRequest(
      'session/prompt',
      guarded('session/prompt', async (p: acp.PromptRequest, { client }) => {
        const h = await host();
        const live = await h.get(p.sessionId);
        const command = slashCommand(p.prompt);
        if (command?.name === 'compact') {
          await live.engine.compactNow();
          return { stopReason: 'end_turn' };
        }
        if (command) {
          await configure(client, h, live, { [command.name]: command.arg });
          return { stopReason: 'end_turn' };
        }
        const model = resolveModel(live.engine.conversation.model, env, config);
        const handle = live.engine.prompt(toContent(p.prompt, { images: model.capabilities.images, model: model.id }));
        const r = await handle.result;
        const meta = { _meta: { troupe: { turnId: r.turnId, steps: r.steps } } };
        if (r.stopReason !== 'error') return { stopReason: r.stopReason, ...meta };
        const code = (r.errorCode && r.errorCode in ERROR_CODES ? r.errorCode : 'internal_error') as keyof typeof ERROR_CODES;
        throw new TroupeError(code, r.message ?? `the turn failed: ${code}`, { sessionId: p.sessionId, turnId: r.turnId });
      }),
    )
    .onNotification('session/cancel', async ({ params }) => {
      const h = await host();
      if (h.isLive(params.sessionId)) (await h.get(params.sessionId)).engine.cancel();
    })
    .onRequest(
      '_troupe/steer',
      steerParams,
      guarded('_troupe/steer', async (p: z.infer<typeof steerParams>) => {
        const live = await (await host()).get(p.sessionId);
        const model = resolveModel(live.engine.conversation.model, env, config);
        return live.engine.steer(p.expectedTurnId, toContent(p.prompt as acp.ContentBlock[], { images: model.capabilities.images, model: model.id }));
      }),
    )
    .onRequest(
      '_troupe/session_state',
      sessionIdOnly,
      guarded('_troupe/session_state', async (p: z.infer<typeof sessionIdOnly>) => {
        const live = await (await host()).get(p.sessionId);
        const conv = live.engine.conversation;
        return { sessionId: p.sessionId, ...live.engine.state(), mode: conv.mode, model: conv.model, title: conv.title ?? null };
      }),
    );
}
