/**
 * ACP prompt blocks → troupe content blocks, and the slash commands a prompt may be. Blocks the
 * agent did not advertise (audio; images for a text-only model) are refused with a clear error
 * rather than silently dropped. What comes out is checked to be the event schema's ContentBlock:
 * `_troupe/steer` takes its blocks unchecked by the SDK, and a malformed one would otherwise be
 * logged as is.
 */
import type * as acp from '@agentclientprotocol/sdk';
import type { ContentBlock } from '../core/events.js';
import { TroupeError } from '../core/errors.js';
import { headOf } from '../core/text-cut.js';

/**
 * The most blocks a prompt may have. Each block is an update to every client attached to the session
 * and in every replay: 300,000 one-word blocks (a few MiB of request) made 91 MB of updates and 4 s
 * of work. An editor attaching files sends a few dozen.
 */
export const MAX_PROMPT_BLOCKS = 10_000;

export function toContent(blocks: acp.ContentBlock[], opts: { images: boolean; model: string }): ContentBlock[] {
  if (blocks.length > MAX_PROMPT_BLOCKS) throw new TroupeError('invalid_params', `a prompt may have at most ${MAX_PROMPT_BLOCKS} blocks, not ${blocks.length}`, { limit: MAX_PROMPT_BLOCKS });
  // Text of nothing but whitespace says nothing, and vendors refuse it (Anthropic: "text content
  // blocks must contain non-whitespace text"): left out, so that a prompt of nothing else is refused
  // here, plainly, rather than by the model's API after the turn started.
  const said = blocks.filter((b) => !(typeof b === 'object' && b !== null && b.type === 'text' && typeof b.text === 'string' && b.text.trim() === ''));
  if (said.length === 0) throw new TroupeError('invalid_params', 'the prompt is empty');
  return said.map((b, i) => {
    const block = toBlock(b, opts);
    // A text block without its text, an image without its mime type: refused here, not stored in
    // the log (every event there matches spec/events.schema.json) nor sent on to clients.
    if (!wellFormedBlock(block)) throw new TroupeError('invalid_params', `prompt block ${i} is not a well-formed ${block.type} block (spec/events.md ContentBlock)`);
    const problem = binaryProblem(block);
    if (problem) throw new TroupeError('invalid_params', `prompt block ${i}: ${problem}`);
    return block;
  });
}

const isString = (v: unknown): boolean => typeof v === 'string';
const isOptionalString = (v: unknown): boolean => v === undefined || typeof v === 'string';

/**
 * Whether a built block is what `ContentBlock` in src/core/events.ts accepts (a property test holds
 * the two equal). Checked by hand, not with that zod schema: importing it would build every event
 * schema in each agent process, about 0.35 MiB of private memory per idle daemon child.
 */
export function wellFormedBlock(b: ContentBlock): boolean {
  switch (b.type) {
    case 'text':
      return isString(b.text);
    case 'image':
      return isString(b.data) && isString(b.mimeType) && isOptionalString(b.uri);
    case 'resource_link':
      return (
        isString(b.uri) &&
        isString(b.name) &&
        isOptionalString(b.title) &&
        isOptionalString(b.description) &&
        isOptionalString(b.mimeType) &&
        (b.size === undefined || (Number.isSafeInteger(b.size) && b.size >= 0))
      );
    case 'resource': {
      const r = b.resource as Record<string, unknown>;
      return isString(r.uri) && isOptionalString(r.mimeType) && (isString(r.text) || isString(r.blob));
    }
    default:
      return false;
  }
}

/** Standard base64 (RFC 4648 §4), padded or not: what every vendor's API takes. */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function base64Problem(data: string, what: string): string | undefined {
  if (data.length === 0) return `${what} is empty`;
  if (data.startsWith('data:')) return `${what} must be the base64 data alone, without a data: URL prefix`;
  const padded = data.endsWith('=');
  if (!BASE64.test(data) || (padded ? data.length % 4 !== 0 : data.length % 4 === 1)) return `${what} is not standard base64 (A-Z, a-z, 0-9, + and /, no line breaks)`;
  return undefined;
}

/**
 * Why an image or a binary resource cannot go to a model, if it cannot: checked here, so that the
 * prompt is refused at once rather than by the vendor's API once its turn has started.
 */
function binaryProblem(b: ContentBlock): string | undefined {
  if (b.type === 'image') {
    if (!/^image\/[\w.+-]+$/.test(b.mimeType)) return `an image's mimeType must be an image type such as image/png, not ${JSON.stringify(headOf(b.mimeType, 100))}`;
    return base64Problem(b.data, "the image's data");
  }
  if (b.type === 'resource' && 'blob' in b.resource) return base64Problem(b.resource.blob, "the resource's blob");
  return undefined;
}

function toBlock(b: acp.ContentBlock, opts: { images: boolean; model: string }): ContentBlock {
  if (typeof b !== 'object' || b === null || typeof b.type !== 'string') throw new TroupeError('invalid_params', 'a prompt block must be an object with a type');
  switch (b.type) {
    case 'text':
      return { type: 'text', text: b.text };
    case 'image':
      // The capability may be the catalogue's guess for a model it does not know: say how to correct it.
      if (!opts.images) throw new TroupeError('invalid_params', `the model ${opts.model} does not accept images (if it does, set "images": true for it under its provider's "models" in the config: docs/providers.md)`);
      return { type: 'image', data: b.data, mimeType: b.mimeType, ...(b.uri ? { uri: b.uri } : {}) };
    case 'resource_link':
      return {
        type: 'resource_link',
        uri: b.uri,
        name: b.name,
        ...(b.title ? { title: b.title } : {}),
        ...(b.description ? { description: b.description } : {}),
        ...(b.mimeType ? { mimeType: b.mimeType } : {}),
        ...(typeof b.size === 'number' ? { size: b.size } : {}),
      };
    case 'resource': {
      const r = b.resource as acp.EmbeddedResource['resource'] | null | undefined;
      if (typeof r !== 'object' || r === null) throw new TroupeError('invalid_params', 'a resource block needs its resource');
      const mime = r.mimeType ? { mimeType: r.mimeType } : {};
      return 'text' in r ? { type: 'resource', resource: { uri: r.uri, text: r.text, ...mime } } : { type: 'resource', resource: { uri: r.uri, blob: r.blob, ...mime } };
    }
    default:
      throw new TroupeError('invalid_params', `troupe does not accept ${(b as { type: string }).type} content in prompts`);
  }
}

export type SlashCommand = { name: 'compact' } | { name: 'mode'; arg: string } | { name: 'model'; arg: string };

/**
 * A prompt that starts with the slash command of an MCP server's prompt (`/mcp__<server>__<prompt>
 * input…`, spec/tools.md §7): the command, what follows it in the first block, and the blocks after
 * it (an attached file, say), which the turn keeps after the prompt's own content.
 */
export function mcpCommand(blocks: acp.ContentBlock[]): { name: string; input: string; rest: acp.ContentBlock[] } | undefined {
  const first = blocks[0];
  if (first?.type !== 'text') return undefined;
  const m = /^\/(mcp__[A-Za-z0-9_-]+)(?:\s+([\s\S]*))?$/.exec(first.text.trim());
  return m ? { name: m[1]!, input: m[2] ?? '', rest: blocks.slice(1) } : undefined;
}

/** A prompt that is exactly one known slash command (`/compact`, `/mode plan`, `/model x/y`). */
export function slashCommand(blocks: acp.ContentBlock[]): SlashCommand | undefined {
  if (blocks.length !== 1 || blocks[0]!.type !== 'text') return undefined;
  const m = /^\/(compact|mode|model)(?:\s+(\S+))?\s*$/.exec(blocks[0].text.trim());
  if (!m) return undefined;
  if (m[1] === 'compact') return { name: 'compact' };
  if (!m[2]) throw new TroupeError('invalid_params', `/${m[1]} needs an argument, e.g. /${m[1] === 'mode' ? 'mode plan' : 'model scripted/demo'}`);
  return { name: m[1] as 'mode' | 'model', arg: m[2] };
}
