/**
 * The offline scripted provider: `scripted/demo` (rules, for demos) and `scripted/replay` (a JSON
 * script named by TROUPE_SCRIPT, for tests). Neither touches the network. spec/scripted-model.md.
 */
import type { ModelCapabilities, ModelProvider, ModelRequest, ProviderEvent } from '../../core/provider.js';
import { estimateTokens, ProviderError } from '../../core/provider.js';
import { TroupeError } from '../../core/errors.js';
import { demoReply } from './demo.model.js';
import { loadReplayScript, ReplyCursor, type ReplayScript } from './replay-script.js';
import { playItems } from './script-items.js';
import { headOf } from '../../core/text-cut.js';

export const SCRIPTED_MODELS = ['demo', 'replay'] as const;

const BASE: ModelCapabilities = { contextWindow: 200_000, maxOutputTokens: 8_192, tools: true, thinking: true, images: true };

function lastUserText(request: ModelRequest): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const m = request.messages[i]!;
    if (m.role === 'user') return m.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n');
  }
  return '';
}

/** A deterministic summary for compaction requests, so that scripts never spend a reply on it. */
function summaryOf(request: ModelRequest): string {
  const users = request.messages.filter((m) => m.role === 'user').length;
  const tools = request.messages.filter((m) => m.role === 'tool').length;
  return `Summary of the earlier conversation: ${users} user messages and ${tools} tool results. Last request: ${headOf(lastUserText(request), 200)}`;
}

/** A stream that fails on its first read, as an async generator that threw would. */
async function* failing(err: unknown): AsyncGenerator<ProviderEvent> {
  throw err;
}

export interface ScriptedOptions {
  /** A script object; otherwise `scriptPath`, otherwise env TROUPE_SCRIPT (read on first use). */
  script?: ReplayScript;
  scriptPath?: string;
  env?: NodeJS.ProcessEnv;
}

export function createScriptedProvider(options: ScriptedOptions = {}): ModelProvider {
  const env = options.env ?? process.env;
  let cursor: ReplyCursor | undefined;
  let script = options.script;
  const replay = (): ReplayScript => {
    if (script) return script;
    const path = options.scriptPath ?? env.TROUPE_SCRIPT;
    if (!path) throw new TroupeError('invalid_params', 'scripted/replay needs a script: set TROUPE_SCRIPT to a JSON script file');
    script = loadReplayScript(path);
    return script;
  };
  const demoDelay = Number(env.TROUPE_DEMO_DELAY_MS ?? 8);

  return {
    id: 'scripted',
    capabilities(model) {
      if (model === 'replay' && (script || options.scriptPath || env.TROUPE_SCRIPT)) return { ...BASE, ...(replay().capabilities ?? {}) };
      return model === 'demo' ? { ...BASE, contextWindow: 32_000, maxOutputTokens: 4_096 } : BASE;
    },
    // Not an async generator itself: delegating with `yield*` would add a promise round trip per
    // item to the one playItems already takes. Errors still surface on the first next().
    stream(request, signal): AsyncGenerator<ProviderEvent> {
      try {
        const estimate = () => ({ input: estimateTokens(request), output: 50 });
        if (request.purpose === 'compaction') {
          const before = request.model === 'replay' && (script || options.scriptPath || env.TROUPE_SCRIPT) ? (replay().compaction ?? []) : [];
          return playItems([...before, { text: summaryOf(request) }], signal, { estimate });
        }
        if (request.model === 'demo') return playItems(demoReply(request), signal, { chunkDelayMs: demoDelay, estimate });
        // Until 2026-12-06 this was `invalid_request`; a model the provider does not have is
        // `model_not_found`, as a vendor's 404 naming the model is (spec/errors.md).
        if (request.model !== 'replay') throw new ProviderError('model_not_found', `unknown scripted model '${request.model}' (use demo or replay)`);
        const s = replay();
        cursor ??= new ReplyCursor(s);
        // Keyed replies answer a user's message, not the tool results that follow their own tool calls.
        const fromUser = request.messages.at(-1)?.role === 'user';
        const items = cursor.take(fromUser ? lastUserText(request) : undefined);
        if (!items) throw new ProviderError('invalid_request', `scripted/replay: the script has no reply left (it has ${s.replies.length})`);
        return playItems(items, signal, { chunkDelayMs: s.chunkDelayMs, estimate });
      } catch (err) {
        return failing(err);
      }
    },
  };
}
