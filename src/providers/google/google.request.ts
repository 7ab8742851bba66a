/**
 * ModelRequest → `generateContentStream` parameters (https://ai.google.dev/api/generate-content).
 * Gemini calls the assistant `model`; tool results go back as `functionResponse` parts of a user turn.
 */
import type { Content, GenerateContentConfig, Part } from '@google/genai';
import type { ContentBlock } from '../../core/events.js';
import type { ModelCapabilities, ModelMessage, ModelRequest } from '../../core/provider.js';
import { contentPlan, megabytes, newestWithin, type ContentPlan, type MediaModel } from '../../core/media-type.js';
import { pdfPageCount } from '../../core/pdf-pages.js';
import { fitThinkingBudget } from './models.js';

/** Prefix of the ids troupe invents for calls Gemini sent without one; they are never sent back. */
export const SYNTHETIC_ID = 'gemini-call-';

export function toGoogleParams(request: ModelRequest, caps: ModelCapabilities): { model: string; contents: Content[]; config: GenerateContentConfig } {
  const config: GenerateContentConfig = {
    maxOutputTokens: request.maxOutputTokens ?? caps.maxOutputTokens,
    // troupe runs tools itself, and retries in one place: no SDK-side function calling or continuation.
    automaticFunctionCalling: { disable: true },
    automaticContinuation: false,
  };
  if (request.system) config.systemInstruction = request.system;
  if (request.tools.length > 0) {
    config.tools = [{ functionDeclarations: request.tools.map((t) => ({ name: t.name, description: t.description, parametersJsonSchema: t.inputSchema })) }];
  }
  if (caps.thinking) {
    // Some Gemini models cannot stop thinking; without a budget troupe only stops asking for summaries.
    const budget = request.thinkingBudget ?? 0;
    config.thinkingConfig = budget > 0 ? { includeThoughts: true, thinkingBudget: fitThinkingBudget(request.model, budget) } : { includeThoughts: false };
  }
  return { model: request.model, contents: toContents(request.messages, caps.images), config };
}

/** `images`: the model's `images` capability (see mediaPlan: without it, no attachment of any kind). */
export function toContents(messages: ModelMessage[], images: boolean): Content[] {
  const out: Content[] = [];
  const plans = geminiPlans(messages, images);
  for (const message of messages) {
    const role = message.role === 'assistant' ? 'model' : 'user';
    const parts = toParts(message, plans);
    if (parts.length === 0) continue;
    const last = out[out.length - 1];
    if (last && last.role === role) last.parts!.push(...parts);
    else out.push({ role, parts });
  }
  return out;
}

function toParts(message: ModelMessage, plans: Plans): Part[] {
  switch (message.role) {
    case 'user':
      return message.content.map((block) => userPart(plans.get(block)!));
    case 'tool':
      return message.results.map((r) => ({
        functionResponse: { ...vendorId(r.toolCallId), name: r.name, response: r.isError ? { error: r.output } : { output: r.output } },
      }));
    case 'assistant': {
      // Thought signatures must return on the part they came with (Gemini 3 rejects calls without
      // them; for thoughts and text Gemini recommends it). Signed thoughts go first, in the order
      // they came, as Gemini sends them before the text and calls; unsigned thought text is not sent
      // back (Gemini reads nothing from it).
      const signatures = new Map<string, string>();
      let textSignature: string | undefined;
      const parts: Part[] = [];
      for (const part of message.reasoning ?? []) {
        if (part.provider !== 'google' || !part.data) continue;
        if (part.kind === 'thought_signature' && part.id) signatures.set(part.id, part.data);
        if (part.kind === 'text_signature') textSignature = part.data;
        if (part.kind === 'thought') parts.push({ thought: true, text: part.text ?? '', thoughtSignature: part.data });
      }
      if (message.text) parts.push({ text: message.text, ...(textSignature ? { thoughtSignature: textSignature } : {}) });
      for (const call of message.toolCalls) {
        const signature = signatures.get(call.id);
        parts.push({ functionCall: { ...vendorId(call.id), name: call.name, args: call.input }, ...(signature ? { thoughtSignature: signature } : {}) });
      }
      return parts;
    }
  }
}

function vendorId(id: string): { id?: string } {
  return id.startsWith(SYNTHETIC_ID) ? {} : { id };
}

/**
 * The types Gemini reads inline (ai.google.dev, "image understanding", "document understanding",
 * audio and video): another, a GIF, a BMP, a zip or a Word file, is a 400 "Unsupported MIME type",
 * for that turn and, the prompt staying in the session, for every later one.
 */
const INLINE_TYPES = /^(image\/(png|jpeg|webp|heic|heif)|application\/pdf|text\/plain|audio\/(wav|mp3|mpeg|aiff|aac|ogg|flac)|video\/(mp4|mpeg|mov|avi|x-flv|mpg|webm|wmv|3gpp))$/;

/** Gemini's limit for the pages of a document ("Gemini supports a maximum of 1,000 document pages"). */
const GEMINI_PDF_PAGES = 1000;

/**
 * Gemini's limit for one PDF: "Maximum file size per file for the API or Cloud Storage imports:
 * 50 MB" (Google Cloud, "Document understanding", beside a separate limit for an inline part, so
 * the file's size, not its base64's). Counted on the decoded bytes (the base64 of 50 MB, a third
 * longer, fits the 100 MB of inline data), as decimal MB, the smaller reading.
 */
const GEMINI_PDF_BYTES = 50 * 1000 * 1000;

/** A file's size in decimal MB as the limit above counts it, rounded up: just over 50 MB reads 50.1, not 50.0. */
const decimalMegabytes = (bytes: number) => `${(Math.ceil(bytes / 100_000) / 10).toFixed(1)} MB`;

/**
 * Gemini's limit for the inline data of a request: "the maximum payload size for inline data" is
 * 100 MB, of base64 (Google, "Increased file size limits and expanded inputs support in Gemini API",
 * 2026-01; 20 MB before), counted here in characters of base64 as decimal MB, the smaller reading.
 */
const GEMINI_INLINE_LIMIT = 100 * 1000 * 1000;

const GEMINI_TYPES: MediaModel = {
  images: true,
  takes: (type: string) => INLINE_TYPES.test(type),
  refused: 'Gemini does not take this type',
  tooLarge: (type: string, data: string, block: ContentBlock) => {
    if (type !== 'application/pdf') return undefined;
    // The size first: it needs no decoding (a PDF over 50 MB is not scanned for its pages).
    const bytes = Buffer.byteLength(data, 'base64');
    if (bytes > GEMINI_PDF_BYTES) return { size: decimalMegabytes(bytes), reason: 'Gemini takes PDFs of at most 50 MB' };
    const pages = pdfPageCount(data, block);
    return pages !== undefined && pages > GEMINI_PDF_PAGES ? { size: `${pages} pages`, reason: `Gemini takes PDFs of at most ${GEMINI_PDF_PAGES} pages` } : undefined;
  },
};

/** What a request carries for each user block, planned once for the request (geminiPlans). */
type Plans = ReadonlyMap<ContentBlock, ContentPlan>;

/**
 * What Gemini is sent for each user block of a request of `messages`: the types it reads inline,
 * PDFs within its pages and its 50 MB, and the attachments that fit its 100 MB of inline data in
 * all, newest first (newestWithin). A session whose history held more (a few videos, a long
 * recording and some scans) got a 400 on every turn until 2026-12-07: the session could not go on.
 * Each block is planned once (until 2026-12-07 every block was planned twice a request, once to
 * size the inline data and again to send it); only an attachment beyond the 100 MB is planned
 * again, for the line that says so.
 */
function geminiPlans(messages: readonly ModelMessage[], images: boolean): Plans {
  const model: MediaModel = { ...GEMINI_TYPES, images };
  const plans = new Map<ContentBlock, ContentPlan>();
  for (const message of messages) {
    if (message.role !== 'user') continue;
    for (const block of message.content) if (!plans.has(block)) plans.set(block, contentPlan(block, model));
  }
  if (!images) return plans;
  const inline = (block: ContentBlock) => {
    const plan = plans.get(block);
    return plan?.kind === 'media' ? plan.data.length : undefined;
  };
  const beyond: MediaModel = {
    ...model,
    tooLarge: (_type, data) => ({ size: megabytes(data.length), reason: 'Gemini takes at most 100 MB of inline data in a request, the newest attachments first' }),
  };
  for (const block of newestWithin(messages, inline, GEMINI_INLINE_LIMIT)) plans.set(block, contentPlan(block, beyond));
  return plans;
}

/**
 * A user part: inline data Gemini takes, or a line saying what was left out (see contentPlan). A
 * model without `images` gets the line for every attachment, PDFs and audio included: until
 * 2026-12-06 those went inline to any Gemini model.
 */
function userPart(plan: ContentPlan): Part {
  return plan.kind === 'text' ? { text: plan.text } : { inlineData: { mimeType: plan.type, data: plan.data } };
}
