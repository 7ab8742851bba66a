/**
 * What a request carries for each block of a user's content, decided once for every adapter: the
 * text lines troupe writes for links and embedded text, and, for an image or a binary resource
 * (a PDF, audio, a zip…), either its data or a short line saying what was left out and why.
 */
import type { ContentBlock } from './events.js';
import type { ModelMessage } from './provider.js';

/**
 * A content block's media type as the vendors' APIs spell it: lower case, and `image/jpg` (what
 * pasteboards and some clients label a JPEG with) as `image/jpeg`, the only JPEG type any of them
 * accepts. Each provider then checks the result against the types its API takes.
 */
export function canonicalMediaType(mimeType: string): string {
  const type = mimeType.toLowerCase();
  return type === 'image/jpg' ? 'image/jpeg' : type;
}

/**
 * The line a prompt carries instead of an attachment the vendor would refuse (a 400 for that turn,
 * and, the prompt staying in the session, for every later one): what it was, its type, and why.
 */
export function omittedMedia(what: string, mimeType: string, reason: string): string {
  return `[${what} (${mimeType}) omitted: ${reason}]`;
}

/** What a request carries for an attachment: its data under the canonical `type`, or a `line` instead. */
export type MediaPlan = { type: string } | { line: string };

/**
 * The model as the plan sees it. `images`: the model's resolved `images` capability (the
 * catalogue's, or a config override's), which troupe reads as "takes more than text": without it no
 * image, PDF, audio or video goes, whatever the vendor's API takes; `takes`: whether the vendor's API
 * takes the canonical type for such a model, and `refused` why not.
 */
export interface MediaModel {
  images: boolean;
  takes: (type: string) => boolean;
  refused: string;
  /**
   * Whether an attachment of a type the vendor takes is beyond what it takes of one (an image over
   * Anthropic's 5 MB, a PDF over 100 pages): its `size` as the line says it (`6.3 MB`, `240 pages`)
   * and the `reason`; undefined when it is within.
   */
  tooLarge?: (type: string, data: string, block: ContentBlock) => { size: string; reason: string } | undefined;
}

/** Why a model without `images` gets no attachment of any type. */
const TEXT_ONLY = { image: 'the model does not take images', other: 'the model takes text only' } as const;

/**
 * What becomes of an attachment of `mimeType` (described as `what`) in a request to a model.
 *
 * Every adapter decides here, so that all follow `images: false` alike, for every kind of attachment.
 * A prompt cannot give such a model an image (the agent refuses it), but a session that switched to it
 * carries the images of its history, and a text-only model refuses every request with one; PDFs and
 * audio reach it in prompts as embedded resources. Until 2026-12-06 only the OpenAI adapters followed
 * the capability for images, and the Google adapter sent PDFs, audio and video to any Gemini model,
 * one configured `images: false` included (a text-only model behind its base URL, which refuses them).
 */
export function mediaPlan(mimeType: string | undefined, what: string, model: MediaModel, data = '', block?: ContentBlock): MediaPlan {
  // A blob without a type: no vendor takes data it cannot name, and a guess could be a 400.
  if (!mimeType) return { line: omittedMedia(what, 'unknown type', 'its type is not given') };
  const type = canonicalMediaType(mimeType);
  if (!model.images) return { line: omittedMedia(what, mimeType, type.startsWith('image/') ? TEXT_ONLY.image : TEXT_ONLY.other) };
  if (!model.takes(type)) return { line: omittedMedia(what, mimeType, model.refused) };
  // Beyond a vendor's limit for one attachment (Anthropic: an image of more than 5 MB, "image exceeds
  // 5 MB maximum"), the vendor refuses the request, and every later one, the prompt staying in the
  // session: a phone photo, a retina screenshot or a book as a PDF would end the session's use.
  const over = block && model.tooLarge?.(type, data, block);
  if (over) return { line: omittedMedia(what, `${mimeType}, ${over.size}`, over.reason) };
  return { type };
}

/** A base64 length in MB (what the vendors' limits count), rounded up: just over 5 MB reads 5.1, not 5.0. */
export const megabytes = (base64Length: number) => `${(Math.ceil((base64Length * 10) / (1024 * 1024)) / 10).toFixed(1)} MB`;

/**
 * The attachments of a conversation that a request cannot carry within a vendor's `limit` for all of
 * them together (Anthropic's and OpenAI's 100 pages of PDF, Gemini's 100 MB of inline data), the
 * newest kept first: what the person just attached goes, older ones beyond the limit give way, each
 * as a line. A vendor refuses the whole request beyond such a limit, and, the attachments staying in
 * the session, every later one. `cost`: what a user block counts for, undefined for one that does not
 * count. By block, not by data: the same file attached twice counts twice, as the vendor counts it.
 */
export function newestWithin(messages: readonly ModelMessage[], cost: (block: ContentBlock) => number | undefined, limit: number): ReadonlySet<ContentBlock> {
  const over = new Set<ContentBlock>();
  let left = limit;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== 'user') continue;
    for (let j = message.content.length - 1; j >= 0; j--) {
      const block = message.content[j]!;
      const counts = cost(block);
      if (counts === undefined) continue;
      if (counts <= left) left -= counts;
      else over.add(block);
    }
  }
  return over;
}

/** A user content block as a request carries it: text, or an attachment's data under its canonical type. */
export type ContentPlan = { kind: 'text'; text: string } | { kind: 'media'; type: string; data: string; uri?: string };

/**
 * One user content block as every adapter sends it: text as it is, a resource link and an embedded
 * text resource as lines, and an image or a binary resource through {@link mediaPlan}. Each adapter
 * then only spells the result in its wire format, so the same prompt reads the same to every model.
 */
export function contentPlan(block: ContentBlock, model: MediaModel): ContentPlan {
  switch (block.type) {
    case 'text':
      return { kind: 'text', text: block.text };
    case 'resource_link':
      return { kind: 'text', text: `[resource ${block.name}: ${block.uri}]` };
    case 'image':
      return media(mediaPlan(block.mimeType, block.uri ? `image ${block.uri}` : 'image', model, block.data, block), block.data, block.uri);
    case 'resource': {
      const r = block.resource;
      if ('text' in r) return { kind: 'text', text: embeddedText(r.uri, r.text) };
      const text = textOfBlob(block, r);
      if (text !== undefined) return { kind: 'text', text: embeddedText(r.uri, text) };
      return media(mediaPlan(r.mimeType, `binary resource ${r.uri}`, model, r.blob, block), r.blob, r.uri);
    }
  }
}

const embeddedText = (uri: string, text: string) => `<resource uri="${uri}">\n${text}\n</resource>`;

/** Types whose data is text: any model reads them, so they go as text rather than as a file. */
const TEXT_TYPES = /^(text\/[\w.+-]+|application\/(json|xml|x-yaml|yaml|toml|javascript|x-sh)|[\w.-]+\/[\w.-]+\+(json|xml))$/;

/** Whether a binary resource of `mimeType` holds text (`text/csv; charset=utf-8`, JSON…), sent as its text. */
export function isTextType(mimeType: string | undefined): boolean {
  return mimeType !== undefined && TEXT_TYPES.test(canonicalMediaType(mimeType).split(';')[0]!.trim());
}

/**
 * Texts kept with the block they were decoded for, as pdf-pages.ts keeps page counts: a conversation
 * sends the same blocks on every request, and until 2026-12-07 every request decoded every text
 * blob of the conversation again (twice for Gemini, which planned its attachments twice), so a long
 * session with a few megabytes of CSV attached decoded them all on each turn. A blob that is not
 * valid UTF-8 is kept as undefined, so that it is not tried again either.
 */
const decoded = new WeakMap<ContentBlock, string | undefined>();

/**
 * A binary resource of a text type, as its text, when it is valid UTF-8. Clients send a file as a
 * blob that could have sent it as text (a `.txt`, a `.csv`, JSON); as a file only Gemini would take
 * some of them, and a text-only model none, when every model reads the text itself.
 */
function textOfBlob(block: ContentBlock, resource: { mimeType?: string; blob: string }): string | undefined {
  if (!isTextType(resource.mimeType)) return undefined;
  if (decoded.has(block)) return decoded.get(block);
  let text: string | undefined;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(resource.blob, 'base64'));
  } catch {
    text = undefined;
  }
  decoded.set(block, text);
  return text;
}

function media(plan: MediaPlan, data: string, uri: string | undefined): ContentPlan {
  return 'line' in plan ? { kind: 'text', text: plan.line } : { kind: 'media', type: plan.type, data, ...(uri ? { uri } : {}) };
}
