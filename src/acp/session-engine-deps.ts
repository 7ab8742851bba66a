/**
 * What a session's engine is wired to in `troupe acp`: the model registry, the workspace tools (over
 * the ACP client's editor buffers and terminals when it offers them) plus the session's MCP tools,
 * the client's permission prompts, the engine limits an operator may set, and the system prompt
 * with the project's instructions.
 */
import type * as acp from '@agentclientprotocol/sdk';
import { systemClock, type Logger } from '../core/ports.js';
import type { SessionEngine } from '../actors/session-engine.js';
import { DEFAULT_LIMITS, type EngineDeps, type EngineLimits } from '../actors/engine-core.js';
import type { FileEventLog } from '../store/index.js';
import { createLocalCommandBackend, createPermissionPolicy, createWorkspaceTools, withExtraTools, type CommandBackend, type ExtraTools, type FileBackend } from '../tools/index.js';
import { resolveModel } from '../providers/registry.js';
import { CREDENTIAL_ENV_VARS, type TroupeConfig } from '../providers/config.js';
import { clientFileBackend, clientPermissionAsker, clientTerminalBackend } from './client-bridges.js';
import { clientAnswerMsFromEnv } from './client-answer.js';
import type { ClientOffer } from './client-offer.js';
import { systemPrompt } from './system-prompt.js';
import { projectInstructions } from './project-instructions.js';
import { MAX_TIMER_MS, msFromEnv } from '../core/option-values.js';

export interface EngineWiring {
  sessionId: string;
  log: FileEventLog;
  cwd: string;
  /** The additional directories of the session's first event, until an engine is bound. */
  initialDirectories: readonly string[];
  env: NodeJS.ProcessEnv;
  config: TroupeConfig;
  logger: Logger;
  limits?: Partial<EngineLimits>;
  client: acp.AgentContext;
  /**
   * What the client offers now (client-offer.ts), asked at each call: a later initialize (or a
   * daemon's offer to a pooled child) applies to the sessions already open too.
   */
  offer: () => ClientOffer;
  /** The session's MCP tools, as they are at each call. */
  mcpTools: () => ExtraTools | undefined;
}

/**
 * The engine's dependencies. Its tools follow the additional directories its conversation holds
 * (a client's session/load or resume may change them): `bind` the engine once it exists; before,
 * they are the initial ones (those of the session's first event).
 */
export function engineDeps(w: EngineWiring): { deps: EngineDeps; bind(engine: SessionEngine): void } {
  const { env, config, logger } = w;
  let bound: SessionEngine | undefined;
  const dirs = () => bound?.conversation.additionalDirectories ?? w.initialDirectories;
  let prompt: { of: readonly string[]; text: string } | undefined;
  const deps: EngineDeps = {
    log: w.log,
    resolveModel: (id) => resolveModel(id, env, config),
    tools: tools(w, dirs),
    policy: createPermissionPolicy(),
    asker: clientPermissionAsker(w.client, w.sessionId),
    clock: systemClock,
    logger,
    limits: { ...DEFAULT_LIMITS, ...limitsFromEnv(env), ...w.limits },
    // The project's AGENTS.md files, read again only when the directories change (project-instructions.ts).
    systemPrompt: (ws) => {
      if (prompt?.of !== ws.additionalDirectories) prompt = { of: ws.additionalDirectories, text: systemPrompt(ws, projectInstructions(ws)) };
      return prompt.text;
    },
  };
  return { deps, bind: (engine) => void (bound = engine) };
}

function tools(w: EngineWiring, dirs: () => readonly string[]) {
  const { client, sessionId, offer } = w;
  // The client's editor buffers, over the host's local backend (each open checked against the workspace).
  // How long the client's machine answers (file reads and writes, a terminal's creation and output) are waited for.
  const waitMs = clientAnswerMsFromEnv(w.env, w.logger);
  const files = (local: FileBackend) => clientFileBackend(client, sessionId, local, offer, waitMs);
  const terminal = clientTerminalBackend(client, sessionId, waitMs);
  const local = createLocalCommandBackend({ withheldEnv: CREDENTIAL_ENV_VARS });
  const commands: CommandBackend = { run: (req, ctx) => (offer().terminal ? terminal : local).run(req, ctx) };
  return withExtraTools(createWorkspaceTools({ cwd: w.cwd, additionalDirectories: dirs, files, commands }), w.mcpTools);
}

/** Engine limits an operator may set: TROUPE_MAX_STEPS, TROUPE_PERMISSION_TIMEOUT_MS, TROUPE_COMPACT_THRESHOLD. */
function limitsFromEnv(env: NodeJS.ProcessEnv): Partial<EngineLimits> {
  const out: Partial<EngineLimits> = {};
  const int = (v: string | undefined) => (v && /^\d+$/.test(v) ? Number(v) : undefined);
  const steps = int(env.TROUPE_MAX_STEPS);
  if (steps) out.maxSteps = steps;
  // At most the longest timer: a longer one fires after 1 ms, which timed every prompt out at once.
  // A bad value is the default (0 here: none given), without a word.
  const timeout = msFromEnv(env, 'TROUPE_PERMISSION_TIMEOUT_MS', { otherwise: 0, min: 1, max: MAX_TIMER_MS, over: () => MAX_TIMER_MS });
  if (timeout) out.permissionTimeoutMs = timeout;
  const threshold = Number(env.TROUPE_COMPACT_THRESHOLD);
  if (threshold > 0 && threshold <= 1) out.compactThreshold = threshold;
  return out;
}
