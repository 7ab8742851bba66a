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
