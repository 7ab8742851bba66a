/** User content blocks (ACP) → the pieces both OpenAI wire formats are built from. */
import type { ContentBlock } from '../../core/events.js';

export type UserPiece = { kind: 'text'; text: string } | { kind: 'image'; dataUrl: string };

export function userPieces(blocks: ContentBlock[]): UserPiece[] {
  return blocks.map((block): UserPiece => {
    switch (block.type) {
      case 'text':
        return { kind: 'text', text: block.text };
      case 'image':
        return { kind: 'image', dataUrl: `data:${block.mimeType};base64,${block.data}` };
      case 'resource_link':
        return { kind: 'text', text: `[resource ${block.name}: ${block.uri}]` };
      case 'resource': {
        const r = block.resource;
        if ('text' in r) return { kind: 'text', text: `<resource uri="${r.uri}">\n${r.text}\n</resource>` };
        if (r.mimeType?.startsWith('image/')) return { kind: 'image', dataUrl: `data:${r.mimeType};base64,${r.blob}` };
        return { kind: 'text', text: `[binary resource ${r.uri} (${r.mimeType ?? 'unknown type'}) omitted]` };
      }
    }
  });
}

/** What the model reads for a tool result; OpenAI formats have no error flag, so failures say so. */
export function toolOutput(result: { output: string; isError: boolean }): string {
  return result.isError ? `Error: ${result.output}` : result.output;
}
