/**
 * .gitignore files, as glob and grep honour them: what a project ignores (build output, `dist/`,
 * `target/`, a `.venv` of fifty thousand files) is not searched unless `include_ignored` asks.
 * Walking such a directory first cost the search its entry budget (a `.venv` sorts before `src`),
 * so the files that mattered were never reached, and filled the results with generated copies.
 *
 * The lines are read and matched by node-ignore (the `ignore` package), which implements the whole
 * of gitignore(5); this file only reads the files and layers them, outermost first, the last
 * matching line winning. Only `.gitignore` files are read, not `.git/info/exclude` nor a global
 * excludes file.
 */
import { relative, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { readConfinedAtMost, type Confine } from './confined-open.js';

/** The lines of one .gitignore file, which apply below the directory that holds it. */
export interface IgnoreLayer {
  dir: string;
  matcher: Ignore;
  /**
   * The matcher with directories that this file alone ignores made exempt, keyed by those
   * directories (see `ownVerdictMatcher`); filled only when a walk reaches such a directory.
   */
  exempted: Map<string, Ignore>;
}

/** A .gitignore larger than this is not read (no real one comes near). */
const MAX_IGNORE_FILE_BYTES = 1024 * 1024;

/** Case-sensitive, as git is by default (core.ignoreCase) on a case-sensitive file system. */
const newMatcher = (): Ignore => ignore({ ignorecase: false });

/** The layer of a .gitignore's text, or undefined when it has no line that could match. */
export function parseGitignore(dir: string, text: string): IgnoreLayer | undefined {
  if (!/^[ \t]*[^#\s]/m.test(text)) return undefined; // only blanks and comments: nothing to test
  return { dir, matcher: newMatcher().add(text), exempted: new Map() };
}

/**
 * The layer of `dir`'s .gitignore, if it has one that is a regular file inside the workspace.
 * `rawDir`: the directory's bytes, when a name in it is not UTF-8 (then `dir` opens nothing).
 */
export async function readIgnoreLayer(dir: string, confine: Confine, rawDir?: Buffer): Promise<IgnoreLayer | undefined> {
  let bytes: Buffer | undefined;
  try {
    // Confined and non-blocking as every read: a .gitignore may be a link out, or a FIFO. The bound
    // holds for the bytes read: until 2026-12-07 the size was checked and then the file read whole,
    // so one that grew in between (a link to a log being written) was read at any size.
    const path = rawDir ? Buffer.concat([rawDir, Buffer.from(`${sep}.gitignore`)]) : `${dir}${sep}.gitignore`;
    bytes = await readConfinedAtMost(path, MAX_IGNORE_FILE_BYTES, confine);
  } catch {
    return undefined; // none, or not one we may read
  }
  return bytes === undefined ? undefined : parseGitignore(dir, bytes.toString('utf8'));
}

/** A gitignore line matching exactly the directory `rel` (relative, `/`-separated), not below it. */
const exactDirLine = (rel: string): string => `/${rel.replace(/[\\*?[\]!# ]/g, '\\$&')}/`;

/**
 * The layer's matcher for entries of the directory `parent` (relative to the layer), such that its
 * verdict is the entry's own. node-ignore reports whatever lies in a directory that the file
 * ignores as ignored, but the walk reaches a directory only when it is not ignored, all layers
 * taken together, or when a search names it: so a directory this file alone ignores was
 * re-included by a deeper .gitignore, or was named, and its entries are judged by their own
 * matches, as git judges them. Such a directory gets a `!/dir/` line added, which re-includes
 * that directory and nothing else.
 */
function ownVerdictMatcher(layer: IgnoreLayer, parent: string): Ignore {
  let matcher = layer.matcher;
  if (!matcher.test(`${parent}/`).ignored) return matcher; // the common case: nothing to exempt
  const exempt: string[] = [];
  let end = -1;
  do {
    end = parent.indexOf('/', end + 1);
    const ancestor = end === -1 ? parent : parent.slice(0, end);
    if (!matcher.test(`${ancestor}/`).ignored) continue;
    exempt.push(ancestor);
    const key = exempt.join('\n');
    let next = layer.exempted.get(key);
    if (!next) layer.exempted.set(key, (next = newMatcher().add(matcher).add(`!${exactDirLine(ancestor)}`)));
    matcher = next;
  } while (end !== -1);
  return matcher;
}

/**
 * Whether the layers of `path`'s ancestor directories (outermost first) ignore it; the last
 * matching line decides, a deeper file's after an outer one's. Only the path's own matches count:
 * the caller asks about entries of directories it walks, which are not ignored (or were named).
 */
export function isIgnored(layers: readonly IgnoreLayer[], path: string, isDir: boolean): boolean {
  let ignored = false;
  for (const layer of layers) {
    const rel = relative(layer.dir, path).split(sep).join('/');
    if (rel === '' || rel === '..' || rel.startsWith('../')) continue; // not below this file
    const slash = rel.lastIndexOf('/');
    const matcher = slash === -1 ? layer.matcher : ownVerdictMatcher(layer, rel.slice(0, slash));
    const verdict = matcher.test(isDir ? `${rel}/` : rel);
    if (verdict.ignored) ignored = true;
    else if (verdict.unignored) ignored = false;
  }
  return ignored;
}
