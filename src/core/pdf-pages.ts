/**
 * How many pages a PDF has, read from its bytes without a PDF library: its page objects
 * (`/Type /Page`), those written plainly and those packed in compressed object streams (`/Type
 * /ObjStm`, which PDF 1.5 writers use). Page content streams, the bulk of a file, are not inflated.
 * Vendors limit the pages of a request (Anthropic and OpenAI: 100), and refuse it whole beyond.
 */
import { inflateSync } from 'node:zlib';
import { canonicalMediaType, newestWithin, type MediaModel } from './media-type.js';
import type { ContentBlock } from './events.js';
import type { ModelMessage } from './provider.js';

/** The most pages Anthropic and OpenAI take of the PDFs of one request ("A maximum of 100 PDF pages may be provided"). */
const PDF_PAGE_LIMIT = 100;

/**
 * The PDF blocks of a conversation that a request cannot carry within PDF_PAGE_LIMIT pages in
 * all, the newest kept first: the PDF the person just attached goes, older ones beyond the limit
 * give way. A vendor counts the pages of every PDF of the request, so three 40-page papers attached
 * in turn would make the third turn's request, and every later one, a 400. A PDF whose pages
 * cannot be counted counts as one.
 */
function pdfsOverLimit(messages: readonly ModelMessage[]): ReadonlySet<ContentBlock> {
  return newestWithin(
    messages,
    (block) => (block.type === 'resource' && 'blob' in block.resource && canonicalMediaType(block.resource.mimeType ?? '') === 'application/pdf' ? (pdfPageCount(block.resource.blob, block) ?? 1) : undefined),
    PDF_PAGE_LIMIT,
  );
}

/** A media model's `tooLarge` clause (media-type.ts). */
export type TooLarge = NonNullable<MediaModel['tooLarge']>;

/**
 * The page rule of Anthropic and OpenAI for a request of `messages`, as a `tooLarge` clause: a PDF
 * beyond PDF_PAGE_LIMIT pages in all (pdfsOverLimit) goes as a line saying so, `vendor` ("Anthropic
 * takes") whose rule it is. None for a model that reads no images, and so no PDFs.
 */
export function pdfPageRule(messages: readonly ModelMessage[], images: boolean, vendor: string): TooLarge {
  const over = images ? pdfsOverLimit(messages) : new Set<ContentBlock>();
  return (type, data, block) => (type === 'application/pdf' && over.has(block) ? pdfOverLimit(data, block, vendor) : undefined);
}

const PAGE = /\/Type\s*\/Page(?![A-Za-z])/g;
const OBJECT_STREAM = /\/Type\s*\/ObjStm(?![A-Za-z])/g;

/**
 * Counts kept with the block they were made for: a conversation sends the same attachments (the same
 * block objects) on every request, all of them, however many. (Until 2026-12-07 the last 16 counts
 * were kept by data: with 17 PDFs or more, every request decoded and scanned every one again, and
 * the cache held PDFs of sessions long gone.)
 */
const counted = new WeakMap<object, number | undefined>();

/**
 * The pages of the PDF whose base64 is `data`, or undefined when none can be found (not a PDF, or an
 * unusual one); `block`, the block whose data it is, keeps the count for the next request.
 */
export function pdfPageCount(data: string, block?: object): number | undefined {
  if (block && counted.has(block)) return counted.get(block);
  const pages = countPages(Buffer.from(data, 'base64'));
  if (block) counted.set(block, pages);
  return pages;
}

function countPages(bytes: Buffer): number | undefined {
  const text = bytes.toString('latin1');
  let pages = text.match(PAGE)?.length ?? 0;
  for (const m of text.matchAll(OBJECT_STREAM)) {
    const keyword = text.indexOf('stream', m.index);
    const end = keyword < 0 ? -1 : text.indexOf('endstream', keyword);
    if (end < 0) continue;
    // The data starts after the keyword's end of line (CRLF or LF, PDF 32000-1 §7.3.8.1).
    let start = keyword + 'stream'.length;
    if (text[start] === '\r') start++;
    if (text[start] === '\n') start++;
    try {
      pages += inflateSync(bytes.subarray(start, end)).toString('latin1').match(PAGE)?.length ?? 0;
    } catch {
      // Another filter, or damaged: its pages are not counted.
    }
  }
  return pages > 0 ? pages : undefined;
}

/** How a line says a PDF was left out for the page limit: its pages, and the rule (`vendor`: "Anthropic takes"). */
function pdfOverLimit(data: string, block: ContentBlock, vendor: string): { size: string; reason: string } {
  const pages = pdfPageCount(data, block);
  return { size: pages === undefined ? 'PDF' : `${pages} pages`, reason: `${vendor} at most ${PDF_PAGE_LIMIT} pages of PDF in a request, the newest PDFs first` };
}
