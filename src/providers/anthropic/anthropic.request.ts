/**
 * ModelRequest → Anthropic Messages API parameters.
 * https://docs.claude.com/en/api/messages, prompt caching: https://docs.claude.com/en/docs/build-with-claude/prompt-caching
 */
import { createHash } from 'node:crypto';
import type Anthropic from '@anthropic-ai/sdk';
import type { ContentBlock } from '../../core/events.js';
import type { ModelCapabilities, ModelMessage, ModelRequest } from '../../core/provider.js';
import { contentPlan, megabytes, type MediaModel } from '../../core/media-type.js';
import { pdfPageRule, type TooLarge } from '../../core/pdf-pages.js';

type MessageParam = Anthropic.Messages.MessageParam;
type BlockParam = Anthropic.Messages.ContentBlockParam;

const EPHEMERAL = { type: 'ephemeral' } as const;
/** Anthropic's floor for `budget_tokens`. */
const MIN_THINKING_BUDGET = 1024;

/** The body shared by `messages.create` and `messages.countTokens`. */
export interface AnthropicBody {
  model: string;
  system?: Anthropic.Messages.TextBlockParam[];
  messages: MessageParam[];
  tools?: Anthropic.Messages.Tool[];
  thinking?: Anthropic.Messages.ThinkingConfigParam;
}

/**
 * Builds the request body. Cache breakpoints go on the last tool, the system prompt and the last
 * block of the conversation: tools and system are identical on every step of a turn, and marking the
 * conversation tail lets the next step read everything before it from the cache.
 */
export function toAnthropicBody(
  request: ModelRequest,
  caps: ModelCapabilities,
  thinkingStyle: 'budget' | 'adaptive' = 'budget',
): AnthropicBody & { max_tokens: number } {
  let maxTokens = request.maxOutputTokens ?? caps.maxOutputTokens;
  let thinking: Anthropic.Messages.ThinkingConfigParam | undefined;
  const wantsThinking = caps.thinking && request.thinkingBudget !== undefined && request.thinkingBudget > 0;
  // The adaptive models' default display is `omitted` (a signature, empty text): the client would be
  // shown no thinking at all, billed all the same. Summaries are what a client can show.
  if (wantsThinking && thinkingStyle === 'adaptive') thinking = { type: 'adaptive', display: 'summarized' };
  else if (wantsThinking && request.thinkingBudget) {
    // budget_tokens must be ≥ 1024 and below max_tokens; raise max_tokens (within the model's limit) before giving up.
    const budget = Math.max(MIN_THINKING_BUDGET, request.thinkingBudget);
    if (budget >= maxTokens) maxTokens = Math.min(caps.maxOutputTokens, budget + MIN_THINKING_BUDGET);
    const fitted = Math.min(budget, maxTokens - 1);
    if (fitted >= MIN_THINKING_BUDGET) thinking = { type: 'enabled', budget_tokens: fitted };
  }
  const body: AnthropicBody & { max_tokens: number } = {
    model: request.model,
    max_tokens: maxTokens,
    messages: toMessages(request.messages, caps.images),
  };
  if (request.system) body.system = [{ type: 'text', text: request.system, cache_control: EPHEMERAL }];
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool, i) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.inputSchema as Anthropic.Messages.Tool.InputSchema,
      ...(i === request.tools.length - 1 ? { cache_control: EPHEMERAL } : {}),
    }));
  }
  if (thinking) body.thinking = thinking;
  markConversationTail(body.messages);
  return body;
}

/**
 * Converts the conversation, merging consecutive same-role turns (tool results then a steer).
 * `images`: the model's `images` capability (see mediaPlan).
 */
export function toMessages(messages: ModelMessage[], images: boolean): MessageParam[] {
  const out: MessageParam[] = [];
  const media: MediaModel = { images, ...anthropicMedia(pdfPageRule(messages, images, 'Anthropic takes')) };
  for (const message of messages) {
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const blocks = toBlocks(message, media);
    if (blocks.length === 0) continue;
    const last = out[out.length - 1];
    if (last && last.role === role && Array.isArray(last.content)) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  }
  return out;
}

function toBlocks(message: ModelMessage, media: MediaModel): BlockParam[] {
  switch (message.role) {
    case 'user':
      return message.content.map((block) => userBlock(block, media));
    case 'tool':
      return message.results.map((r) => ({ type: 'tool_result', tool_use_id: toolUseId(r.toolCallId), content: toolResultContent(r), is_error: r.isError }));
    case 'assistant': {
      const said: BlockParam[] = [];
      // Anthropic refuses a text block of nothing but whitespace ("text content blocks must contain
      // non-whitespace text"), and the reply stays in the history: the session could not go on. A
      // model sometimes answers just "\n\n"; it says nothing, so it is left out.
      if (message.text.trim()) said.push({ type: 'text', text: message.text });
      for (const call of message.toolCalls) said.push({ type: 'tool_use', id: toolUseId(call.id), name: call.name, input: call.input });
      // A reply that is thinking alone (cut by max_tokens, or cancelled, before it said anything) is
      // left out whole: Anthropic refuses an assistant message that ends in thinking ("The final block
      // in an assistant message cannot be `thinking`"), on every later request that carries it.
      if (said.length === 0) return [];
      // Thinking blocks go back first, unmodified and with their signature, as the API requires.
      const thinking: BlockParam[] = [];
      for (const part of message.reasoning ?? []) {
        if (part.provider !== 'anthropic') continue;
        if (part.kind === 'thinking' && part.data) thinking.push({ type: 'thinking', thinking: part.text ?? '', signature: part.data });
        if (part.kind === 'redacted_thinking' && part.data) thinking.push({ type: 'redacted_thinking', data: part.data });
      }
      return [...thinking, ...said];
    }
  }
}

/**
 * A call id as Anthropic takes it (`^[a-zA-Z0-9_-]+$`). Calls another vendor made earlier in the
 * session may have others (Kimi's `functions.read_file:0`), and Anthropic refuses the whole request
 * for one, on every turn after a switch to it. The same id always maps to the same one, so a call
 * and its result stay paired; the hash keeps two ids that differ only in those characters apart.
 */
function toolUseId(id: string): string {
  if (/^[A-Za-z0-9_-]+$/.test(id)) return id;
  return `${id.replace(/[^A-Za-z0-9_-]/g, '_')}_${createHash('sha256').update(id).digest('hex').slice(0, 8)}`;
}

/** Said in place of a failed tool's empty output, which Anthropic refuses. */
const EMPTY_ERROR_OUTPUT = 'The tool call failed without saying why (it gave no output).';

/**
 * A tool result's content. Anthropic refuses an error result without content ("content cannot be
 * empty if `is_error` is true"), and every later request carries it: a tool that fails silently (an
 * MCP server's `isError` with no text) would end the session's every turn with that 400.
 */
function toolResultContent(result: { output: string; isError: boolean }): string {
  return result.isError && result.output.trim() === '' ? EMPTY_ERROR_OUTPUT : result.output;
}

/**
 * The media types the Messages API takes: images of these four types ("Input should be 'image/jpeg',
 * 'image/png', 'image/gif' or 'image/webp'") and PDF documents. Another is a 400 for the whole request,
 * and the prompt stays in the session: an iPhone's HEIC photo would make every later turn fail.
 */
const MEDIA_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp', 'application/pdf']);

/** The API's limit for one image, on its base64 text: "image exceeds 5 MB maximum: 6520000 bytes > 5242880 bytes". */
const IMAGE_BASE64_LIMIT = 5 * 1024 * 1024;

/**
 * What Anthropic takes, for a request whose PDF page rule is `pdfPages` ("A maximum of 100 PDF
 * pages may be provided": see pdfPageRule).
 */
function anthropicMedia(pdfPages: TooLarge): Omit<MediaModel, 'images'> {
  return {
    takes: (type) => MEDIA_TYPES.has(type),
    refused: 'Anthropic takes JPEG, PNG, GIF and WebP images and PDF documents only',
    tooLarge: (type, data, block) => {
      if (type.startsWith('image/') && data.length > IMAGE_BASE64_LIMIT) return { size: megabytes(data.length), reason: 'Anthropic takes images of at most 5 MB' };
      return pdfPages(type, data, block);
    },
  };
}

/** A user block as Anthropic takes it; what and why (see contentPlan). */
function userBlock(block: ContentBlock, model: MediaModel): BlockParam {
  const plan = contentPlan(block, model);
  if (plan.kind === 'text') return { type: 'text', text: plan.text };
  if (plan.type === 'application/pdf') return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: plan.data } };
  return { type: 'image', source: { type: 'base64', media_type: plan.type as 'image/jpeg', data: plan.data } };
}

/**
 * Puts the conversation's breakpoint on its last block that can hold one. An empty tool result (a
 * command that printed nothing) cannot: Anthropic refuses cache_control on empty content ("cache_control
 * cannot be set for empty text blocks"), so the block before it is marked; the few tokens after it
 * are simply not cached.
 */
function markConversationTail(messages: MessageParam[]): void {
  for (let m = messages.length - 1; m >= 0; m--) {
    const content = messages[m]!.content;
    if (!Array.isArray(content)) return;
    for (let b = content.length - 1; b >= 0; b--) {
      const block = content[b]!;
      if (block.type === 'tool_result' && isEmptyResult(block.content)) continue;
      if (block.type === 'text' || block.type === 'tool_result' || block.type === 'image' || block.type === 'document' || block.type === 'tool_use') block.cache_control = EPHEMERAL;
      return;
    }
  }
}

function isEmptyResult(content: Anthropic.Messages.ToolResultBlockParam['content']): boolean {
  return content === undefined || (typeof content === 'string' ? content === '' : content.length === 0);
}
