/**
 * The ACP agent: every method troupe serves, on the SDK's app API (ACP v1, stable; `session/fork`
 * is registered with its own parser since it is an unstable method). Handlers translate between ACP
 * and the session engine; TroupeErrors become JSON-RPC errors with the string code in `data.code`.
 */
import * as acp from '@agentclientprotocol/sdk';
import { z } from 'zod';
import { ERROR_CODES, isTroupeError, TroupeError } from '../core/errors.js';
import type { Logger } from '../core/ports.js';
import { resolveModel } from '../providers/registry.js';
import type { TroupeConfig } from '../providers/config.js';
import { isMode, type LiveSession, type SessionHost } from './session-host.js';
import { configOptions, modeState, SLASH_COMMANDS } from './session-options.js';
import { initializeResult } from './capabilities.js';
import { slashCommand, toContent } from './prompt-content.js';

export interface AgentOptions {
  host: SessionHost;
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
  const { host, env, config, logger } = opts;
  const guarded = guard(logger);

  const sessionState = (live: LiveSession) => {
    const conv = live.engine.conversation;
    return { modes: modeState(conv.mode), configOptions: configOptions({ mode: conv.mode, model: conv.model }, host.models()) };
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
  const configure = async (client: acp.AgentContext, live: LiveSession, change: { mode?: string; model?: string }) => {
    if (change.mode !== undefined && !isMode(change.mode)) throw new TroupeError('invalid_params', `unknown mode '${change.mode}' (default, accept-edits, plan, bypass)`);
    live.engine.configure(change);
    const options = sessionState(live).configOptions;
    await client.notify('session/update', { sessionId: live.engine.sessionId, update: { sessionUpdate: 'config_option_update', configOptions: options } });
    return options;
  };

  return acp
    .agent({ name: 'troupe' })
    .onRequest('initialize', ({ params, client }) => {
      host.attach(client, params.clientCapabilities ?? {});
      const images = (() => {
        try {
          return resolveModel(host.defaultModel(), env, config).capabilities.images;
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
        const live = await host.create({ cwd: p.cwd, additionalDirectories: p.additionalDirectories ?? [] });
        announceCommands(client, live.engine.sessionId);
        return { sessionId: live.engine.sessionId, ...sessionState(live) };
      }),
    )
    .onRequest(
      'session/load',
      guarded('session/load', async (p: acp.LoadSessionRequest, { client }) => {
        const live = await host.get(p.sessionId);
        sameCwd(live, p.cwd);
        await host.replay(live);
        announceCommands(client, p.sessionId);
        return sessionState(live);
      }),
    )
    .onRequest(
      'session/resume',
      guarded('session/resume', async (p: acp.ResumeSessionRequest, { client }) => {
        const live = await host.get(p.sessionId);
        sameCwd(live, p.cwd);
        announceCommands(client, p.sessionId);
        return sessionState(live);
      }),
    )
    .onRequest(
      'session/list',
      guarded('session/list', async (p: acp.ListSessionsRequest) => {
        const page = host.index.list({ ...(p.cwd ? { cwd: p.cwd } : {}), ...(p.cursor ? { cursor: p.cursor } : {}), limit: 50 });
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
        if (!host.isLive(p.sessionId) && !host.index.get(p.sessionId)) throw new TroupeError('session_not_found', `no session ${p.sessionId}`, { sessionId: p.sessionId });
        await host.unload(p.sessionId);
        return {};
      }),
    )
    .onRequest(
      'session/delete',
      guarded('session/delete', async (p: acp.DeleteSessionRequest) => {
        await host.delete(p.sessionId);
        return {};
      }),
    )
    .onRequest(
      'session/fork',
      forkParams,
      guarded('session/fork', async (p: z.infer<typeof forkParams>, { client }) => {
        const live = await host.fork(p.sessionId, p.cwd, p.additionalDirectories ?? []);
        announceCommands(client, live.engine.sessionId);
        return { sessionId: live.engine.sessionId, ...sessionState(live) };
      }),
    )
    .onRequest(
      'session/set_mode',
      guarded('session/set_mode', async (p: acp.SetSessionModeRequest, { client }) => {
        await configure(client, await host.get(p.sessionId), { mode: p.modeId });
        return {};
      }),
    )
    .onRequest(
      'session/set_config_option',
      guarded('session/set_config_option', async (p: acp.SetSessionConfigOptionRequest, { client }) => {
        const live = await host.get(p.sessionId);
        const value = (p as { value: unknown }).value;
        if (typeof value !== 'string') throw new TroupeError('invalid_params', `config option ${p.configId} takes a string value`);
        if (p.configId === 'mode') return { configOptions: await configure(client, live, { mode: value }) };
        if (p.configId === 'model') return { configOptions: await configure(client, live, { model: value }) };
        throw new TroupeError('invalid_params', `unknown config option '${p.configId}' (mode, model)`);
      }),
    )
    .onRequest(
      'session/prompt',
      guarded('session/prompt', async (p: acp.PromptRequest, { client }) => {
        const live = await host.get(p.sessionId);
        const command = slashCommand(p.prompt);
        if (command?.name === 'compact') {
          await live.engine.compactNow();
          return { stopReason: 'end_turn' };
        }
        if (command) {
          await configure(client, live, { [command.name]: command.arg });
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
      if (host.isLive(params.sessionId)) (await host.get(params.sessionId)).engine.cancel();
    })
    .onRequest(
      '_troupe/steer',
      steerParams,
      guarded('_troupe/steer', async (p: z.infer<typeof steerParams>) => {
        const live = await host.get(p.sessionId);
        const model = resolveModel(live.engine.conversation.model, env, config);
        return live.engine.steer(p.expectedTurnId, toContent(p.prompt as acp.ContentBlock[], { images: model.capabilities.images, model: model.id }));
      }),
    )
    .onRequest(
      '_troupe/session_state',
      sessionIdOnly,
      guarded('_troupe/session_state', async (p: z.infer<typeof sessionIdOnly>) => {
        const live = await host.get(p.sessionId);
        const conv = live.engine.conversation;
        return { sessionId: p.sessionId, ...live.engine.state(), mode: conv.mode, model: conv.model, title: conv.title ?? null };
      }),
    );
}
