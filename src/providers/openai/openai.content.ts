/** User content blocks (ACP) → the pieces both OpenAI wire formats are built from. */
import type { ContentBlock } from '../../core/events.js';
import { contentPlan, type MediaModel } from '../../core/media-type.js';
import type { TooLarge } from '../../core/pdf-pages.js';

/** Text, or an attachment as a data URL (`filename` for a file: the Responses API wants one). */
export type UserPiece = { kind: 'text'; text: string } | { kind: 'image'; dataUrl: string } | { kind: 'file'; dataUrl: string; filename: string };

/** Which attachments a wire format takes, and the reason a line gives for one it does not. */
export type OpenAIMedia = Omit<MediaModel, 'images'>;

/** The image types OpenAI takes ("You uploaded an unsupported image… ['png', 'jpeg', 'gif', 'webp']", a 400 for the whole request). */
const IMAGE_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * The Responses API: those images, and PDFs (`input_file`, which vision models read) within OpenAI's
 * 100 pages for a request: `pdfPages`, its page rule (see pdfPageRule).
 */
export function responsesMedia(pdfPages: TooLarge): OpenAIMedia {
  return {
    takes: (type) => IMAGE_TYPES.has(type) || type === 'application/pdf',
    refused: 'the model takes PNG, JPEG, GIF and WebP images and PDF documents only',
    tooLarge: pdfPages,
  };
}

/**
 * OpenAI-compatible servers (Chat Completions): the image types of the format they imitate. Until
 * 2026-12-06 an image of any type went, and a server refused another (llama.cpp, behind Open WebUI:
 * 400 "Failed to load image or audio file" for an iPhone's HEIC photo), on every later request of the
 * session too. Chat Completions has no file part the servers share (OpenAI's own `file` part is not
 * Ollama's, vLLM's or llama.cpp's), so PDFs, audio and other files go as lines.
 */
export const COMPATIBLE_MEDIA: OpenAIMedia = {
  takes: (type) => IMAGE_TYPES.has(type),
  refused: 'the server takes PNG, JPEG, GIF and WebP images only',
};

/**
 * The pieces of a user message (see contentPlan): an attachment the format does not take, or any
 * attachment for a model without `images`, becomes a line saying it was left out, since the vendor
 * would refuse the request and, the prompt staying in the session, every later one. Until 2026-12-06
 * images went to a model without `images` as well: a session that switched to it from a model that
 * reads images carries them in its history, and a text-only server refuses every request with one
 * (vLLM "not a multimodal model", llama.cpp "image input is not supported").
 */
export function userPieces(blocks: ContentBlock[], media: OpenAIMedia, images: boolean): UserPiece[] {
  return blocks.map((block): UserPiece => {
    const plan = contentPlan(block, { images, ...media });
    if (plan.kind === 'text') return { kind: 'text', text: plan.text };
    const dataUrl = `data:${plan.type};base64,${plan.data}`;
    if (plan.type.startsWith('image/')) return { kind: 'image', dataUrl };
    return { kind: 'file', dataUrl, filename: fileName(plan.uri) };
  });
}

/** The last segment of an attachment's URI, which the Responses API shows the model as the file's name. */
function fileName(uri: string | undefined): string {
  const last = uri?.split(/[/\\]/).filter(Boolean).at(-1);
  return last ? decodeURIComponentSafe(last) : 'attachment.pdf';
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** What the model reads for a tool result; OpenAI formats have no error flag, so failures say so. */
export function toolOutput(result: { output: string; isError: boolean }): string {
  return result.isError ? `Error: ${result.output}` : result.output;
}
