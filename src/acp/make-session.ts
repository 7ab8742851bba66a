/**
 * Making a new session in this process (ACP session/new, and forks): its log drawn (a spare while it
 * holds no event), its MCP servers started, its engine made, and its first events durable before it
 * is handed over.
 */
import type { AgentEvent } from '../core/events.js';
import type { TroupeConfig } from '../providers/config.js';
import { resolveModel } from '../providers/registry.js';
import { SessionEngine } from '../actors/session-engine.js';
import { DEFAULT_MODE_ID, type mcpServersOf } from '../tools/index.js';
import { assertDirectory, requestedDirectories, sessionCwd } from './session-directories.js';
import type { SessionMcp } from './session-mcp.js';
import type { LiveSession } from './session-host.js';
import type { SessionParts } from './reopen-session.js';
import { transitionReport } from './transition-report.js';

export interface NewSession {
  cwd: string;
  additionalDirectories: string[];
  model?: string;
  mode?: string;
  forkedFrom?: { sessionId: string; throughSeq: number };
}

/** The MCP servers its request named, and the signal that withdraws it. */
export interface NewSessionMcp {
  servers: ReturnType<typeof mcpServersOf>;
  signal?: AbortSignal;
}

/** What making a session needs of its host (SessionHost). */
export interface MakeParts extends SessionParts {
  readonly env: NodeJS.ProcessEnv;
  readonly config: TroupeConfig;
  readonly mcp: Pick<SessionMcp, 'stop'>;
  /** Throws `capacity_exceeded` once the shutdown has begun. */
  refuseWhileStopping(): void;
  /** The default model; throws when no turn could use it (a TROUPE_MODEL of no model troupe serves). */
  defaultModel(): string;
  useMcpServers(sessionId: string, cwd: string, servers: NewSessionMcp['servers'], signal: AbortSignal | undefined, additionalDirectories: string[]): Promise<void>;
}

/** A new session (SessionHost.create says what it answers, and when it refuses). */
export async function makeSession(host: MakeParts, init: NewSession, history: readonly AgentEvent[], mcp: NewSessionMcp | undefined): Promise<LiveSession> {
  host.refuseWhileStopping();
  assertDirectory(init.cwd, 'cwd');
  const cwd = sessionCwd(init.cwd);
  const additionalDirectories = requestedDirectories(cwd, init.additionalDirectories);
  // A fork keeps its source's model as it is (the default is checked: host.defaultModel).
  const model = init.model ?? host.defaultModel();
  resolveModel(model, host.env, host.config);
  const mode = init.mode ?? DEFAULT_MODE_ID;
  const { sessionId, log } = await host.logs.forNewSession();
  // While the log holds no event it is no session (a spare: SessionLogs), listed nowhere. Until
  // 2026-12-07 the servers started once the session was made, and a `$/cancel_request` of the
  // session/new was not heeded until they had started or their start timeout had passed.
  try {
    host.refuseWhileStopping();
    if (mcp) await host.useMcpServers(sessionId, cwd, mcp.servers, mcp.signal, additionalDirectories);
  } catch (err) {
    await host.logs.discard(log);
    throw err;
  }
  const { deps, bind } = host.deps(sessionId, log, cwd, additionalDirectories);
  const transitions = transitionReport(host.reporter, sessionId);
  const engine = SessionEngine.create(deps, { sessionId, cwd, additionalDirectories, model, mode, ...(init.forkedFrom ? { forkedFrom: init.forkedFrom } : {}) }, history, transitions);
  bind(engine);
  // session_created is a barrier (spec/event-log.md §3): the session is reported once it is durable,
  // as a turn's result is, so that no crash after the answer can lose a session a client was given.
  // Synced on this thread: the request has nothing else to wait for, and a small write and an
  // fdatasync take less than the two thread-pool round trips they would otherwise cost.
  try {
    log.syncNow();
    await log.whenDurable(log.lastSeq());
    // The shutdown began meanwhile (its MCP servers' start ended by it, say): undone as a failed write is.
    host.refuseWhileStopping();
  } catch (err) {
    await engine.dispose().catch(() => undefined);
    // Nothing its engine tells from now on reaches the daemon as a session of this process.
    transitions.stop();
    // No client was given this session (a full disk, say): its log is not left behind, nor its servers.
    await host.logs.discard(log);
    void host.mcp.stop(sessionId, { forget: true }).catch(() => undefined);
    throw err;
  }
  // The log is the truth and the index can be rebuilt from it: session/new does not wait for it.
  const created = (await log.readAfter(0)).events;
  void host.index.applyEvents(created).catch((err) => host.logger.error('index update failed', { sessionId, error: String(err) }));
  host.logger.info('session created', { sessionId, cwd, model, mode });
  return host.track(engine, log, 0, transitions.stop);
}
