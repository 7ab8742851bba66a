/**
 * ModelRequest → OpenAI Responses API parameters (https://platform.openai.com/docs/api-reference/responses).
 * Requests are stateless (`store: false`): the whole conversation is sent each time, and reasoning
 * models return their reasoning encrypted so it can be sent back with the next request.
 */
import type OpenAI from 'openai';
import type { ModelCapabilities, ModelMessage, ModelRequest } from '../../core/provider.js';
import { pdfPageRule } from '../../core/pdf-pages.js';
import { responsesMedia, toolOutput, userPieces, type UserPiece } from './openai.content.js';

type InputItem = OpenAI.Responses.ResponseInputItem;

/** Fields shared by `responses.create` and `responses.inputTokens.count`. */
export interface ResponsesBody {
  model: string;
  instructions?: string;
  input: InputItem[];
  tools?: OpenAI.Responses.FunctionTool[];
  reasoning?: OpenAI.Responses.ResponseCreateParams['reasoning'];
}

export function toResponsesBody(request: ModelRequest, caps: ModelCapabilities): ResponsesBody & {
  max_output_tokens: number;
  store: false;
  include?: OpenAI.Responses.ResponseIncludable[];
} {
  const body: ResponsesBody & { max_output_tokens: number; store: false; include?: OpenAI.Responses.ResponseIncludable[] } = {
    model: request.model,
    input: toInput(request.messages, caps.thinking, caps.images),
    max_output_tokens: request.maxOutputTokens ?? caps.maxOutputTokens,
    store: false,
  };
  if (request.system) body.instructions = request.system;
  if (request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.inputSchema, strict: false }));
  }
  if (caps.thinking) {
    // Reasoning cannot be switched off on reasoning models; "no budget" asks for the least effort.
    const budget = request.thinkingBudget ?? 0;
    body.reasoning = budget > 0 ? { effort: effortFor(budget), summary: 'auto' } : { effort: 'low' };
    body.include = ['reasoning.encrypted_content'];
  }
  return body;
}

/** A token budget → the nearest reasoning effort. */
export function effortFor(budget: number): 'low' | 'medium' | 'high' {
  if (budget <= 4_096) return 'low';
  if (budget <= 16_384) return 'medium';
  return 'high';
}

/**
 * The conversation as input items. `reasoning`: whether the model reasons; reasoning items go back
 * only to one that does (after a switch from gpt-5 to gpt-4.1, say, the API would refuse them).
 * `images`: whether it reads images, and so PDFs (see userPieces).
 */
export function toInput(messages: ModelMessage[], reasoning: boolean, images: boolean): InputItem[] {
  const items: InputItem[] = [];
  const media = responsesMedia(pdfPageRule(messages, images, 'the model takes'));
  for (const message of messages) {
    if (message.role === 'user') {
      items.push({ role: 'user', content: userPieces(message.content, media, images).map(inputContent) });
    } else if (message.role === 'tool') {
      for (const r of message.results) items.push({ type: 'function_call_output', call_id: r.toolCallId, output: toolOutput(r) });
    } else items.push(...assistantItems(message, reasoning));
  }
  return items;
}

function inputContent(p: UserPiece): OpenAI.Responses.ResponseInputContent {
  if (p.kind === 'text') return { type: 'input_text', text: p.text };
  if (p.kind === 'image') return { type: 'input_image', image_url: p.dataUrl, detail: 'auto' };
  return { type: 'input_file', file_data: p.dataUrl, filename: p.filename };
}

type AssistantMessage = Extract<ModelMessage, { role: 'assistant' }>;

/**
 * A reply as items, in the order the model gave them. The API wants each reasoning item followed by
 * the item it preceded ("Item 'rs_…' of type 'reasoning' was provided without its required following
 * item"), and every later request of the session carries the reply: a reply of reasoning, text,
 * reasoning, a call goes back so, each reasoning item where `ReasoningPart.at` says it came (a part
 * without it came first). One that nothing followed (the reply was cut by its output limit, or
 * cancelled, after it) is left out. Between two reasoning items text goes before calls: with
 * `store: false` the items carry no ids, so only what kind of item follows a reasoning item counts.
 */
function assistantItems(message: AssistantMessage, reasoning: boolean): InputItem[] {
  const items: InputItem[] = [];
  let said = 0;
  let called = 0;
  const sayUpTo = (text: number, toolCalls: number) => {
    if (text > said) items.push({ role: 'assistant', content: message.text.slice(said, text) });
    said = Math.max(said, text);
    for (; called < toolCalls; called++) {
      const call = message.toolCalls[called]!;
      items.push({ type: 'function_call', call_id: call.id, name: call.name, arguments: JSON.stringify(call.input) });
    }
  };
  for (const part of reasoning ? (message.reasoning ?? []) : []) {
    if (part.provider !== 'openai' || part.kind !== 'reasoning' || !part.id || !part.data) continue;
    const text = Math.min(part.at?.text ?? 0, message.text.length);
    const toolCalls = Math.min(part.at?.toolCalls ?? 0, message.toolCalls.length);
    if (text >= message.text.length && toolCalls >= message.toolCalls.length) continue;
    sayUpTo(text, toolCalls);
    items.push({ type: 'reasoning', id: part.id, encrypted_content: part.data, summary: part.text ? [{ type: 'summary_text', text: part.text }] : [] });
  }
  sayUpTo(message.text.length, message.toolCalls.length);
  return items;
}
