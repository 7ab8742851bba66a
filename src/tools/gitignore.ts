/**
 * .gitignore files, as glob and grep honour them: what a project ignores (build output, `dist/`,
 * `target/`, a `.venv` of fifty thousand files) is not searched unless `include_ignored` asks.
 * Walking such a directory first cost the search its entry budget (a `.venv` sorts before `src`),
 * so the files that mattered were never reached, and filled the results with generated copies.
 *
 * The subset of gitignore(5) that matters here: `#` comments, `!` negation (the last matching line
 * wins; nothing inside an ignored directory is re-included, since it is never walked), a trailing
 * `/` for directories only, a `/` at the start or in the middle anchoring the pattern to the
 * file's directory (otherwise it matches a name at any depth), `*`, `?`, `[…]` and `**`. Only
 * `.gitignore` files are read, not `.git/info/exclude` nor a global excludes file.
 */
import { basename, relative, sep } from 'node:path';
import { openForRead, type Confine } from './confined-open.js';
import { compilePlainPattern } from './glob-pattern.js';

interface IgnoreRule {
  negate: boolean;
  dirOnly: boolean;
  /** Matched against the entry's name (no `/` in the pattern) or its path from the file's directory. */
  byName: boolean;
  matches(subject: string): boolean;
}

/** The rules of one .gitignore file, which apply below the directory that holds it. */
export interface IgnoreLayer {
  dir: string;
  rules: IgnoreRule[];
}

/** A .gitignore larger than this is not read (no real one comes near). */
const MAX_IGNORE_FILE_BYTES = 1024 * 1024;

/** The common shapes, matched without the general matcher: `name` and `*.ext`. */
function matcherOf(pattern: string): (subject: string) => boolean {
  if (!/[*?[]/.test(pattern)) return (subject) => subject === pattern;
  const suffix = /^\*([^*?[/]+)$/.exec(pattern)?.[1];
  if (suffix !== undefined) return (subject) => subject.endsWith(suffix) && !subject.slice(0, -suffix.length).includes('/');
  return compilePlainPattern(pattern);
}

export function parseGitignore(text: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const raw of text.split('\n')) {
    // Trailing blanks (and a CRLF file's \r) do not count, unless a backslash keeps the last one.
    let line = raw.replace(/(?<!\\)[ \t\r]+$/, '').replace(/\\ $/, ' ');
    if (line === '' || line.startsWith('#')) continue;
    const negate = line.startsWith('!');
    if (negate) line = line.slice(1);
    if (line.startsWith('\\#') || line.startsWith('\\!')) line = line.slice(1);
    const dirOnly = line.endsWith('/');
    if (dirOnly) line = line.replace(/\/+$/, '');
    const byName = !line.includes('/');
    line = line.replace(/^\//, '');
    if (line === '') continue;
    try {
      rules.push({ negate, dirOnly, byName, matches: matcherOf(line) });
    } catch {
      // A class that does not compile ignores nothing (git too leaves such a line without effect).
    }
  }
  return rules;
}

/** The layer of `dir`'s .gitignore, if it has one that is a regular file inside the workspace. */
export async function readIgnoreLayer(dir: string, confine: Confine): Promise<IgnoreLayer | undefined> {
  let text: string;
  try {
    // Confined and non-blocking as every read: a .gitignore may be a link out, or a FIFO.
    const handle = await openForRead(`${dir}${sep}.gitignore`, confine);
    try {
      if ((await handle.stat()).size > MAX_IGNORE_FILE_BYTES) return undefined;
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch {
    return undefined; // none, or not one we may read
  }
  const rules = parseGitignore(text);
  return rules.length > 0 ? { dir, rules } : undefined;
}

/**
 * Whether the layers of `path`'s ancestor directories (outermost first) ignore it; the last
 * matching rule decides.
 */
export function isIgnored(layers: readonly IgnoreLayer[], path: string, isDir: boolean): boolean {
  let ignored = false;
  const name = basename(path);
  for (const layer of layers) {
    let rel: string | undefined;
    for (const rule of layer.rules) {
      if (rule.dirOnly && !isDir) continue;
      if (rule.negate !== ignored) continue; // cannot change the verdict
      const subject = rule.byName ? name : (rel ??= relative(layer.dir, path).split(sep).join('/'));
      if (rule.matches(subject)) ignored = !rule.negate;
    }
  }
  return ignored;
}
