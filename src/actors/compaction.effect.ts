/**
 * Context budget: the preflight estimate and compaction. Compaction summarizes the turns older than
 * the last `keepTurns` with the session's own model, and cuts long tool outputs; both are recorded
 * in the compaction_completed event, so a session reopened from its log sees the same context.
 */
import { newLocalId } from '../core/ids.js';
import type { ModelMessage, ModelRequest } from '../core/provider.js';
import type { EngineCore, ResolvedModel } from './engine-core.js';
import { classify, StepError } from './step-error.js';

/** Offline estimate: about four characters per token. */
export function estimateTokens(request: Pick<ModelRequest, 'system' | 'messages' | 'tools'>): number {
  return Math.ceil((request.system.length + JSON.stringify(request.messages).length + JSON.stringify(request.tools).length) / 4);
}

/** The vendor's count where it has one, else the offline estimate. */
async function countTokens(resolved: ResolvedModel, request: ModelRequest, signal: AbortSignal): Promise<number> {
  if (resolved.provider.countTokens) {
    try {
      return await resolved.provider.countTokens(request, signal);
    } catch {
      // A failed count must not fail the turn: fall back to the estimate.
    }
  }
  return estimateTokens(request);
}

export async function preflight(core: EngineCore, signal: AbortSignal): Promise<{ overBudget: boolean }> {
  const resolved = core.model();
  const tokens = await countTokens(resolved, core.request(resolved), signal);
  return { overBudget: tokens > resolved.capabilities.contextWindow * core.deps.limits.compactThreshold };
}

const SUMMARY_INSTRUCTION =
  'Summarize the conversation above for your own later use: the goals, the decisions taken, the files ' +
  'touched and their state, and what remains to do. Be concise and factual.';

export async function compact(core: EngineCore, turnId: string | undefined, reason: 'preflight' | 'overflow' | 'manual', signal: AbortSignal): Promise<void> {
  const resolved = core.model();
  const conv = core.conversation;
  const compactionId = newLocalId('cmp');
  const base = { sessionId: core.sessionId, compactionId, ...(turnId ? { turnId } : {}) };
  core.openCompactionId = compactionId;
  core.emit({ type: 'compaction_started', ...base, reason, tokensBefore: estimateTokens(core.request(resolved)) });

  // Keep the last `keepTurns` completed turns verbatim and summarize everything before them; after a
  // provider overflow, keeping them evidently did not fit, so every completed turn is summarized.
  const ends = conv.turnEnds;
  const keep = reason === 'overflow' ? 0 : core.deps.limits.keepTurns;
  const cut = ends.length > keep ? ends[ends.length - keep - 1]! : undefined;
  let summary: string | undefined;
  try {
    if (cut !== undefined && cut > (conv.summary?.throughSeq ?? 0)) summary = await summarize(core, resolved, conv.messages({ throughSeq: cut }), signal);
  } catch (err) {
    if (signal.aborted) throw new StepError('request_cancelled', 'the turn was cancelled');
    const failure = classify(err);
    core.openCompactionId = undefined;
    core.emit({ type: 'compaction_completed', ...base, status: 'failed', errorCode: failure.code });
    throw failure;
  }
  if (signal.aborted) throw new StepError('request_cancelled', 'the turn was cancelled');
  core.openCompactionId = undefined;
  core.emit({
    type: 'compaction_completed',
    ...base,
    status: 'completed',
    ...(summary !== undefined ? { summary, throughSeq: cut } : {}),
    toolOutputLimit: core.deps.limits.toolOutputLimit,
  });
}

async function summarize(core: EngineCore, resolved: ResolvedModel, history: ModelMessage[], signal: AbortSignal): Promise<string> {
  const request: ModelRequest = {
    model: resolved.model,
    system: 'You write summaries of coding sessions.',
    messages: [...history, { role: 'user', content: [{ type: 'text', text: SUMMARY_INSTRUCTION }] }],
    tools: [],
    maxOutputTokens: Math.min(2_048, resolved.capabilities.maxOutputTokens),
    purpose: 'compaction',
  };
  let text = '';
  for await (const ev of resolved.provider.stream(request, signal)) if (ev.type === 'text_delta') text += ev.text;
  if (!text.trim()) throw new StepError('context_overflow', 'compaction produced an empty summary');
  return text;
}
