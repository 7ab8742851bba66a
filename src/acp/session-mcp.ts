/**
 * The MCP servers of the sessions of one host (spec/tools.md §7). A client names them in
 * `session/new`, `session/load` and `session/resume`; they run while their session is loaded. The
 * MCP SDK is loaded only for a session that has servers.
 */
import type { ContentBlock } from '../core/events.js';
import { TroupeError } from '../core/errors.js';
import type { Logger } from '../core/ports.js';
import { VERSION } from '../core/version.js';
import { DEFAULT_LIMITS, type ExtraTools, type McpServerConfig } from '../tools/index.js';
import type { McpCommand } from '../tools/mcp/mcp-prompts.js';
import type { McpTools } from '../tools/mcp/mcp-tools.js';
import { mcpLimitsFromEnv } from './mcp-limits.js';

interface Slot {
  sessionId: string;
  /** The servers and the cwd they run in, as one string: the same list again changes nothing. */
  key: string;
  cwd: string;
  /** The session's directories, its cwd first: the servers' roots. */
  roots: string[];
  servers: McpServerConfig[];
  /** Starting or started; undefined while stopped (an idle unload). */
  tools?: Promise<McpTools | undefined>;
  /** Started: what calls use. */
  current?: McpTools;
  /** Stops the servers' start (stop), tool and prompt lists included: one still starting is not waited for. */
  starting?: AbortController;
}

export class SessionMcp {
  private readonly slots = new Map<string, Slot>();
  private readonly startTimeoutMs: number;
  private readonly callMaxTotalMs: number;
  /** Set by `endStarts`. */
  private ending = false;
  /** Stops of servers already forgotten (a start its request withdrew): `stopAll` waits for them too. */
  private readonly stopping = new Set<Promise<void>>();

  /**
   * `commandsChanged`: one of a session's servers changed its prompts (its slash commands) while it
   * runs. (Those a session starts with are told by whoever made the session known to its client.)
   */
  constructor(
    private readonly logger: Logger,
    env: NodeJS.ProcessEnv,
    private readonly commandsChanged: (sessionId: string) => void = () => undefined,
  ) {
    ({ startTimeoutMs: this.startTimeoutMs, callMaxTotalMs: this.callMaxTotalMs } = mcpLimitsFromEnv(env, logger));
  }

  /**
   * What the session's servers came to, for `_troupe/session_state`: each one's tool count, or why
   * it is left out or not serving; `starting` while they start, `stopped` after an idle unload.
   */
  status(sessionId: string): { name: string; transport: string; state: 'starting' | 'stopped' | 'serving' | 'failed'; tools: number; error?: string }[] {
    const slot = this.slots.get(sessionId);
    if (!slot) return [];
    return slot.servers.map(({ name, transport }) => {
      if (!slot.tools) return { name, transport, state: 'stopped', tools: 0 };
      const s = slot.current?.servers.find((x) => x.name === name);
      if (!slot.current || !s) return { name, transport, state: 'starting', tools: 0 };
      const error = s.error ?? slot.current.exited(name);
      return error ? { name, transport, state: 'failed', tools: s.tools, error } : { name, transport, state: 'serving', tools: s.tools };
    });
  }

  /** The session's MCP tools that are running now (its tool host asks at every call). */
  tools(sessionId: string): ExtraTools | undefined {
    return this.slots.get(sessionId)?.current;
  }

  /** The session's MCP prompts as slash commands (none until its servers have started). */
  commands(sessionId: string): McpCommand[] {
    return this.slots.get(sessionId)?.current?.commands() ?? [];
  }

  /** The turn content of one of the session's MCP commands, once its servers have started. */
  async expand(sessionId: string, command: string, input: string, signal?: AbortSignal): Promise<ContentBlock[]> {
    const tools = await this.slots.get(sessionId)?.tools;
    if (!tools) throw new TroupeError('invalid_params', `There is no command /${command}: the session has no MCP server running.`);
    return tools.expand(command, input, signal);
  }

  /**
   * From now on the session uses these servers: those it had stop, these start (unless they are
   * the same and all running; a list with one that was left out or has exited starts again).
   * Resolves once each has started or has been left out. `withdrawn`: the request that named them
   * was withdrawn while those it had stopped (its caller stops these): they do not start.
   */
  async use(sessionId: string, cwd: string, servers: McpServerConfig[], additionalDirectories: readonly string[] = [], withdrawn?: AbortSignal): Promise<void> {
    const roots = [cwd, ...additionalDirectories];
    const key = JSON.stringify([roots, servers]);
    const slot = this.slots.get(sessionId);
    if (slot?.key === key) {
      await this.start(slot);
      if (this.status(sessionId).every((s) => s.state === 'serving')) return;
    }
    if (slot) await this.stop(sessionId, { forget: true });
    if (servers.length === 0 || withdrawn?.aborted) return;
    const next: Slot = { sessionId, key, cwd, roots, servers };
    this.slots.set(sessionId, next);
    return this.start(next);
  }

  /**
   * The session's directories changed (a client loaded it with other additional directories): its
   * servers are told, and are given the new roots when they ask.
   */
  setRoots(sessionId: string, cwd: string, additionalDirectories: readonly string[]): void {
    const slot = this.slots.get(sessionId);
    if (!slot) return;
    slot.roots = [cwd, ...additionalDirectories];
    slot.key = JSON.stringify([slot.roots, slot.servers]);
    slot.current?.rootsChanged();
  }

  /** Starts again the servers of a session stopped by an idle unload (`stop` without forgetting). */
  async restart(sessionId: string): Promise<void> {
    const slot = this.slots.get(sessionId);
    if (slot) await this.start(slot);
  }

  /** Stops the session's servers; `forget`: and drops them (session/close), else `restart` starts them again. */
  async stop(sessionId: string, { forget }: { forget: boolean }): Promise<void> {
    const slot = this.slots.get(sessionId);
    if (!slot) return;
    if (forget) this.slots.delete(sessionId);
    const tools = slot.tools;
    slot.tools = undefined;
    slot.current = undefined;
    slot.starting?.abort();
    const stopped = (async () => void (await (await tools)?.close()))();
    if (forget) {
      this.stopping.add(stopped);
      void stopped.finally(() => this.stopping.delete(stopped)).catch(() => undefined);
    }
    await stopped;
  }

  /**
   * The agent's input has ended: no server is waited for any more. Those starting stop, and one a
   * request in flight would start from now on stops at once (left out, as at `stopAll`).
   */
  endStarts(): void {
    this.ending = true;
    for (const slot of this.slots.values()) slot.starting?.abort();
  }

  /** Stops every session's servers, and waits for those still stopping (the agent is exiting: none outlives it). */
  async stopAll(): Promise<void> {
    await Promise.all([...[...this.slots.keys()].map((id) => this.stop(id, { forget: true })), ...this.stopping]);
  }

  private async start(slot: Slot): Promise<void> {
    if (!slot.tools) {
      const starting = (slot.starting = new AbortController());
      if (this.ending) starting.abort();
      const attempt: Promise<McpTools | undefined> = import('../tools/mcp/mcp-tools.js')
        .then(({ connectMcpTools }) =>
          connectMcpTools(slot.servers, {
            cwd: slot.cwd,
            roots: () => slot.roots,
            logger: this.logger,
            connectTimeoutMs: this.startTimeoutMs,
            callTimeoutMs: DEFAULT_LIMITS.commandMaxTimeoutMs,
            callMaxTotalMs: this.callMaxTotalMs,
            outputLimit: DEFAULT_LIMITS.readMaxBytes,
            version: VERSION,
            onCommandsChanged: () => slot.current && this.commandsChanged(slot.sessionId),
            signal: starting.signal,
          }),
        )
        .then(
          (tools) => {
            // Stopped (or stopped and started again) while starting: these are nobody's.
            if (slot.tools !== attempt) {
              void tools.close();
              return undefined;
            }
            slot.current = tools;
            this.logger.info('MCP servers started', { servers: tools.servers });
            return tools;
          },
          (err) => {
            // Stopped while they listed their tools: what stop asked for, no failure.
            if (starting.signal.aborted) this.logger.info('MCP servers stopped while starting', { error: String(err) });
            else this.logger.error('cannot start the MCP servers', { error: String(err) });
            return undefined;
          },
        );
      slot.tools = attempt;
    }
    await slot.tools;
  }
}
