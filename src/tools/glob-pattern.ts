/**
 * Glob patterns compiled to regular expressions over `/`-separated relative paths.
 *
 * Syntax: `*` (any run of characters except `/`), `?` (one such character), `**` as a whole
 * segment (zero or more directories), `[abc]` / `[a-z]` / `[!abc]` classes, `{a,b}` alternatives
 * (nestable). A pattern with no `/` matches the file *name* at any depth (as in .gitignore and
 * ripgrep), so `*.ts` finds every TypeScript file; a pattern with a `/` matches the whole path
 * relative to the search directory. Dot files are matched like any other file.
 */
import { TroupeError } from '../core/errors.js';

export interface CompiledGlob {
  /** Whether the relative path (with `/` separators) matches. */
  matches(relPath: string): boolean;
}

function escapeRegex(ch: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(ch) ? `\\${ch}` : ch;
}

function translate(pattern: string): string {
  let out = '';
  let depth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '*') {
      const atSegmentStart = i === 0 || pattern[i - 1] === '/';
      if (pattern[i + 1] === '*' && atSegmentStart && (i + 2 === pattern.length || pattern[i + 2] === '/')) {
        // `**/` → any number of whole directories; a trailing `**` → anything below.
        if (i + 2 === pattern.length) out += '.*';
        else out += '(?:[^/]*/)*';
        i += 2;
        continue;
      }
      out += '[^/]*';
    } else if (ch === '?') {
      out += '[^/]';
    } else if (ch === '[') {
      const close = pattern.indexOf(']', i + 2);
      if (close === -1) {
        out += '\\[';
        continue;
      }
      let body = pattern.slice(i + 1, close);
      if (body.startsWith('!')) body = `^${body.slice(1)}`;
      out += `[${body.replace(/\\/g, '\\\\')}]`;
      i = close;
    } else if (ch === '{') {
      depth++;
      out += '(?:';
    } else if (ch === ',' && depth > 0) {
      out += '|';
    } else if (ch === '}' && depth > 0) {
      depth--;
      out += ')';
    } else {
      out += escapeRegex(ch);
    }
  }
  if (depth !== 0) throw new TroupeError('invalid_params', `Invalid glob ${JSON.stringify(pattern)}: unbalanced "{".`);
  return out;
}

/** Compiles a glob; throws TroupeError `invalid_params` for a malformed or absolute pattern. */
export function compileGlob(pattern: string): CompiledGlob {
  if (pattern.startsWith('/')) throw new TroupeError('invalid_params', `Invalid glob ${JSON.stringify(pattern)}: patterns are relative to the search directory.`);
  const cleaned = pattern.replace(/^\.\//, '');
  const byName = !cleaned.includes('/');
  let re: RegExp;
  try {
    re = new RegExp(`^${translate(cleaned)}$`);
  } catch (err) {
    if (err instanceof TroupeError) throw err;
    throw new TroupeError('invalid_params', `Invalid glob ${JSON.stringify(pattern)}: ${(err as Error).message}`);
  }
  return {
    matches(relPath) {
      return re.test(byName ? relPath.slice(relPath.lastIndexOf('/') + 1) : relPath);
    },
  };
}
