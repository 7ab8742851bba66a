/** User content blocks (ACP) → the pieces both OpenAI wire formats are built from. */
import type { ContentBlock } from '../../core/events.js';
import { mediaPlan } from '../../core/media-type.js';

export type UserPiece = { kind: 'text'; text: string } | { kind: 'image'; dataUrl: string };

/**
 * The image types OpenAI's API takes ("You uploaded an unsupported image… ['png', 'jpeg', 'gif',
 * 'webp']", a 400 for the whole request). `image/jpg` is the JPEG type by another name.
 */
export const OPENAI_IMAGE_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * The pieces of a user message. With `imageTypes`, an image of another type becomes a line saying it
 * was left out: the vendor would refuse the request, and the prompt, staying in the session, every
 * later one. Without it (OpenAI-compatible servers, which read what their model reads) images go as they are.
 *
 * `images`: the model's `images` capability (see mediaPlan). Until 2026-12-06 images went to a model
 * without it as well: a session that switched to it from a model that reads images carries them in
 * its history, and a text-only server refuses every request with one (vLLM "not a multimodal model",
 * llama.cpp "image input is not supported"): after `/model openai-compatible/…` no turn of the
 * session could run. Now each goes as a line saying so.
 */
export function userPieces(blocks: ContentBlock[], imageTypes: ReadonlySet<string> | undefined, images: boolean): UserPiece[] {
  const model = { images, takes: (type: string) => !imageTypes || imageTypes.has(type), refused: 'the model takes PNG, JPEG, GIF and WebP images only' };
  const image = (mimeType: string, data: string, what: string): UserPiece => {
    const plan = mediaPlan(mimeType, what, model);
    return 'line' in plan ? { kind: 'text', text: plan.line } : { kind: 'image', dataUrl: `data:${plan.type};base64,${data}` };
  };
  return blocks.map((block): UserPiece => {
    switch (block.type) {
      case 'text':
        return { kind: 'text', text: block.text };
      case 'image':
        return image(block.mimeType, block.data, block.uri ? `image ${block.uri}` : 'image');
      case 'resource_link':
        return { kind: 'text', text: `[resource ${block.name}: ${block.uri}]` };
      case 'resource': {
        const r = block.resource;
        if ('text' in r) return { kind: 'text', text: `<resource uri="${r.uri}">\n${r.text}\n</resource>` };
        if (r.mimeType?.startsWith('image/')) return image(r.mimeType, r.blob, `image ${r.uri}`);
        return { kind: 'text', text: `[binary resource ${r.uri} (${r.mimeType ?? 'unknown type'}) omitted]` };
      }
    }
  });
}

/** What the model reads for a tool result; OpenAI formats have no error flag, so failures say so. */
export function toolOutput(result: { output: string; isError: boolean }): string {
  return result.isError ? `Error: ${result.output}` : result.output;
}
