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
 * What becomes of an attachment of `mimeType` (described as `what`) in a request to a model.
 * `images`: the model's resolved `images` capability (the catalogue's, or a config override's);
 * `takes`: whether the vendor's API takes the canonical type, and `refused` why not.
 *
 * Every adapter decides here, so that all follow `images: false` alike. A prompt cannot give such a
 * model an image (the agent refuses it), but a session that switched to it carries the images of
 * its history, and a text-only model refuses every request with one. Until 2026-12-06 only the
 * OpenAI adapters followed it: an Anthropic or Gemini model configured without images (a text-only
 * model behind ANTHROPIC_BASE_URL, say) was sent them.
 */
export function mediaPlan(mimeType: string, what: string, model: { images: boolean; takes: (type: string) => boolean; refused: string }): MediaPlan {
  const type = canonicalMediaType(mimeType);
  if (!model.images && type.startsWith('image/')) return { line: omittedMedia(what, mimeType, 'the model does not take images') };
  if (model.takes(type)) return { type };
  return { line: omittedMedia(what, mimeType, model.refused) };
}
