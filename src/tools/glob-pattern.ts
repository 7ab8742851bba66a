/**
 * Glob patterns compiled to regular expressions over `/`-separated relative paths.
 *
 * Syntax: `*` (any run of characters except `/`), `?` (one such character), `**` as a whole
 * segment (zero or more directories), `[abc]` / `[a-z]` / `[!abc]` classes, `{a,b}` alternatives
 * (nestable). A pattern with no `/` matches the file *name* at any depth (as in .gitignore and
 * ripgrep), so `*.ts` finds every TypeScript file; a pattern with a `/` matches the whole path
 * relative to the search directory. Dot files are matched like any other file.
 *
 * Matching is not done by a regular expression: `*a*a*a*a*a*a*a*b` became a regex that backtracks
 * exponentially (minutes on a 60-character file name, blocking the agent). Braces are expanded
 * first (as in minimatch and bash), then each alternative is a flat token list matched by dynamic
 * programming in O(tokens × path length), whatever the pattern.
 */
import { TroupeError } from '../core/errors.js';

export interface CompiledGlob {
  /** Whether the relative path (with `/` separators) matches. */
  matches(relPath: string): boolean;
}

/** Bounds on brace expansion: `{a,b}{c,d}…` multiplies. */
const MAX_ALTERNATIVES = 256;
const MAX_EXPANDED_CHARS = 20_000;

type Token =
  | { kind: 'char'; ch: string }
  | { kind: 'one' } // ? : one character other than `/`
  | { kind: 'class'; re: RegExp } // [abc], [!a], [a-z]: one character
  | { kind: 'star' } // * : any run of characters other than `/`
  | { kind: 'dirs' } // **/ : zero or more whole directories
  | { kind: 'rest' }; // trailing ** : anything

function invalid(pattern: string, why: string): TroupeError {
  return new TroupeError('invalid_params', `Invalid glob ${JSON.stringify(pattern)}: ${why}`);
}

/** Index of the `]` closing a class opened at `i`, or -1 (then `[` is literal). */
function classEnd(text: string, i: number): number {
  return text.indexOf(']', i + 2);
}

/** Expands the first top-level `{…}` of `text` (recursively); classes are not looked into. */
function expandBraces(text: string, pattern: string, out: string[]): void {
  let open = -1;
  let depth = 0;
  const commas: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '[') {
      const close = classEnd(text, i);
      if (close !== -1) i = close;
    } else if (ch === '{') {
      if (depth++ === 0) open = i;
    } else if (ch === ',' && depth === 1) {
      commas.push(i);
    } else if (ch === '}' && depth > 0 && --depth === 0) {
      const bounds = [open, ...commas, i];
      for (let k = 0; k + 1 < bounds.length; k++) {
        expandBraces(text.slice(0, open) + text.slice(bounds[k]! + 1, bounds[k + 1]) + text.slice(i + 1), pattern, out);
      }
      return;
    }
  }
  if (depth !== 0) throw invalid(pattern, 'unbalanced "{".');
  out.push(text);
  if (out.length > MAX_ALTERNATIVES || out.reduce((n, alt) => n + alt.length, 0) > MAX_EXPANDED_CHARS) {
    throw invalid(pattern, `its braces expand to more than ${MAX_ALTERNATIVES} alternatives or ${MAX_EXPANDED_CHARS} characters.`);
  }
}

function tokenize(alt: string, pattern: string): Token[] {
  const tokens: Token[] = [];
  for (let i = 0; i < alt.length; i++) {
    const ch = alt[i]!;
    if (ch === '*') {
      const atSegmentStart = i === 0 || alt[i - 1] === '/';
      if (alt[i + 1] === '*' && atSegmentStart && (i + 2 === alt.length || alt[i + 2] === '/')) {
        // `**/` → any number of whole directories; a trailing `**` → anything below.
        tokens.push({ kind: i + 2 === alt.length ? 'rest' : 'dirs' });
        i += 2;
        continue;
      }
      tokens.push({ kind: 'star' });
    } else if (ch === '?') {
      tokens.push({ kind: 'one' });
    } else if (ch === '[' && classEnd(alt, i) !== -1) {
      const close = classEnd(alt, i);
      let body = alt.slice(i + 1, close);
      if (body.startsWith('!')) body = `^${body.slice(1)}`;
      try {
        tokens.push({ kind: 'class', re: new RegExp(`^[${body.replace(/\\/g, '\\\\')}]$`) });
      } catch (err) {
        throw invalid(pattern, (err as Error).message);
      }
      i = close;
    } else {
      tokens.push({ kind: 'char', ch });
    }
  }
  return tokens;
}

/**
 * Whether `tokens` match all of `text`. `next[j]` says whether tokens[t+1…] match text[j…]; rows
 * are computed from the last token back, so each (token, position) is decided once.
 */
function matchTokens(tokens: Token[], text: string): boolean {
  const n = text.length;
  let next = new Uint8Array(n + 1);
  next[n] = 1;
  for (let t = tokens.length - 1; t >= 0; t--) {
    const tok = tokens[t]!;
    const row = new Uint8Array(n + 1);
    let any = false;
    for (let j = n; j >= 0; j--) {
      let ok: boolean;
      switch (tok.kind) {
        case 'char':
          ok = j < n && text[j] === tok.ch && next[j + 1] === 1;
          break;
        case 'one':
          ok = j < n && text[j] !== '/' && next[j + 1] === 1;
          break;
        case 'class':
          ok = j < n && tok.re.test(text[j]!) && next[j + 1] === 1;
          break;
        case 'star':
          ok = next[j] === 1 || (j < n && text[j] !== '/' && row[j + 1] === 1);
          break;
        case 'dirs': {
          // Zero directories, or one (`[^/]*/`) and then again.
          ok = next[j] === 1;
          if (!ok) {
            const slash = text.indexOf('/', j);
            ok = slash !== -1 && row[slash + 1] === 1;
          }
          break;
        }
        case 'rest':
          ok = true;
          break;
      }
      if (ok) {
        row[j] = 1;
        any = true;
      }
    }
    // No position matches the rest: nothing before it can.
    if (!any) return false;
    next = row;
  }
  return next[0] === 1;
}

/** Compiles a glob; throws TroupeError `invalid_params` for a malformed or absolute pattern. */
export function compileGlob(pattern: string): CompiledGlob {
  if (pattern.startsWith('/')) throw invalid(pattern, 'patterns are relative to the search directory.');
  const cleaned = pattern.replace(/^\.\//, '');
  const byName = !cleaned.includes('/');
  const alternatives: string[] = [];
  expandBraces(cleaned, pattern, alternatives);
  const compiled = [...new Set(alternatives)].map((alt) => tokenize(alt, pattern));
  return {
    matches(relPath) {
      const subject = byName ? relPath.slice(relPath.lastIndexOf('/') + 1) : relPath;
      return compiled.some((tokens) => matchTokens(tokens, subject));
    },
  };
}
