/**
 * Stack traces of the bundled agent, made readable when they are logged. `troupe acp` runs from a
 * minified bundle (dist/acp-script, dist/acp-bundle) built without esbuild's `keepNames`: keeping
 * every function's name costs each process a `name` property of its own on ~2,700 functions, about
 * 1.4 MiB of private memory per idle child (bench/README.md, "Function names"). Its frames name
 * minified functions at places in one long line; this maps each frame's place back to the
 * TypeScript source through the bundle's source map, read only when a stack is logged (errors are
 * rare; Node's `--enable-source-maps` would parse the 2.5 MB map in every process at start).
 */
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

const BUNDLED = /[\\/]dist[\\/]acp-(?:script|bundle)[\\/][^\\/]+\.c?js$/;
/** `    at fn (file:line:col)` or `    at file:line:col` (and `async` frames). */
const FRAME = /^(\s+at (?:async )?)(?:(.*) \()?((?:file:\/\/)?[^()\s]+):(\d+):(\d+)(\)?)$/;

const maps = new Map<string, SourceMap | null>();

function mapFor(file: string): SourceMap | null {
  let map = maps.get(file);
  if (map === undefined) {
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')));
    } catch {
      map = null; // no map next to it (an installed copy may leave it out): the frame stays as it is
    }
    maps.set(file, map);
  }
  return map;
}

/**
 * `stack` with every frame in a bundled file (by default the agent's bundles; `isBundled` picks
 * others) rewritten to its source's place, `[bundled place]` kept after it. Other lines as they are.
 */
export function readableStack(stack: string, isBundled: (file: string) => boolean = (f) => BUNDLED.test(f)): string {
  return stack
    .split('\n')
    .map((line) => {
      const m = FRAME.exec(line);
      if (!m) return line;
      const [, at, fn, where, lineNo, colNo, close] = m;
      const file = where!.startsWith('file://') ? fileURLToPath(where!) : where!;
      if (!isBundled(file)) return line;
      const entry = mapFor(file)?.findEntry(Number(lineNo) - 1, Number(colNo) - 1);
      if (!entry || !('originalSource' in entry) || !entry.originalSource) return line;
      const source = entry.originalSource.replace(/^(?:\.\.\/)+/, '');
      const place = `${source}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
      return fn ? `${at}${fn} (${place}) [${lineNo}:${colNo}]` : `${at}${place} [${lineNo}:${colNo}]${close}`;
    })
    .join('\n');
}
