// Builds a SessionEngine on real parts: the in-memory event log, the scripted provider, the real
// workspace tools in a temporary directory and the real mode policy. Every event is checked
// against spec/events.schema.json as it is emitted.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentEvent } from '../../src/core/events.js';
import { silentLogger, systemClock, type PermissionAsker } from '../../src/core/ports.js';
import type { ModelProvider } from '../../src/core/provider.js';
import { newSessionId } from '../../src/core/ids.js';
import { TroupeError } from '../../src/core/errors.js';
import { SessionEngine } from '../../src/actors/session-engine.js';
import { DEFAULT_LIMITS, type EngineDeps, type EngineLimits } from '../../src/actors/engine-core.js';
import { MemoryEventLog } from '../../src/store/memory-event-log.store.js';
import { createScriptedProvider } from '../../src/providers/scripted/scripted.provider.js';
import type { ReplayScript } from '../../src/providers/scripted/replay-script.js';
import type { ScriptItem } from '../../src/providers/scripted/script-items.js';
import { createPermissionPolicy, createWorkspaceTools } from '../../src/tools/index.js';
import { ControlledAsker } from './controlled-asker.js';
import { eventSchemaError } from './event-schema.js';

export interface Harness {
  engine: SessionEngine;
  log: MemoryEventLog;
  asker: ControlledAsker;
  dir: string;
  /** Every event emitted so far, in order. */
  events: AgentEvent[];
  /** Events that broke the schema (tests assert this stays empty). */
  schemaErrors: string[];
  ofType<T extends AgentEvent['type']>(type: T): Extract<AgentEvent, { type: T }>[];
}

export interface HarnessOptions {
  mode?: string;
  limits?: Partial<EngineLimits>;
  asker?: PermissionAsker;
  capabilities?: ReplayScript['capabilities'];
  model?: string;
  /** Puts a model of the test's own around the scripted one (e.g. one that enforces its window). */
  wrapProvider?: (scripted: ModelProvider) => ModelProvider;
}

export function text(t: string) {
  return [{ type: 'text' as const, text: t }];
}

/** The scripted model's call of write_file, writing `content` to `path`. */
export const writeCall = (path: string, content = 'hello\n') => ({ tool_call: { name: 'write_file', input: { path, content } } });

/** The types of the events emitted so far, in order. */
export function eventTypes(h: Harness): string[] {
  return h.events.map((e) => e.type);
}

/** No event broke the schema, and the seqs run from 1 with no holes. */
export function assertWellFormed(h: Harness): void {
  assert.deepEqual(h.schemaErrors, []);
  h.events.forEach((e, i) => assert.equal(e.seq, i + 1, 'seq from 1 with no holes'));
}

/**
 * Makes the log's append of the next event of `type` throw, once, as a bug in the machine action that
 * writes it would: the session stops on internal_error (SessionEngine.stopWith).
 */
export function throwOnceOnAppend(h: Harness, type: AgentEvent['type']): void {
  const append = h.log.append.bind(h.log);
  let thrown = false;
  h.log.append = (input) => {
    if (input.type === type && !thrown) {
      thrown = true;
      throw new Error('a bug in an action');
    }
    return append(input);
  };
}

export function makeHarness(replies: ScriptItem[][] | ReplayScript, options: HarnessOptions = {}): Harness {
  const script: ReplayScript = Array.isArray(replies) ? { replies, capabilities: options.capabilities } : replies;
  const dir = mkdtempSync(join(tmpdir(), 'troupe-engine-'));
  const sessionId = newSessionId();
  const log = new MemoryEventLog({ sessionId });
  const asker = (options.asker as ControlledAsker) ?? new ControlledAsker();
  const scripted = createScriptedProvider({ script, env: {} });
  const provider = options.wrapProvider ? options.wrapProvider(scripted) : scripted;
  const deps: EngineDeps = {
    log,
    resolveModel(modelId) {
      const [prefix, model] = modelId.split('/');
      if (prefix !== 'scripted' || !model) throw new TroupeError('model_not_found', `no provider serves ${modelId}`);
      return { provider, model, capabilities: provider.capabilities(model) };
    },
    tools: createWorkspaceTools({ cwd: dir, additionalDirectories: [] }),
    policy: createPermissionPolicy(),
    asker,
    clock: systemClock,
    logger: silentLogger,
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    systemPrompt: () => 'You are a test model.',
  };
  const events: AgentEvent[] = [];
  const schemaErrors: string[] = [];
  // Record at the log itself, so that nothing the engine appends escapes the check.
  const append = log.append.bind(log);
  log.append = (input) => {
    const e = append(input);
    events.push(e);
    const err = eventSchemaError(e);
    if (err) schemaErrors.push(err);
    return e;
  };
  const engine = SessionEngine.create(deps, { sessionId, cwd: dir, model: options.model ?? 'scripted/replay', mode: options.mode ?? 'bypass' });
  return {
    engine,
    log,
    asker,
    dir,
    events,
    schemaErrors,
    ofType: (type) => events.filter((e) => e.type === type) as never,
  };
}
