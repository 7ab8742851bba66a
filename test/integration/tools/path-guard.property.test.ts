// Property: whatever path a model invents (.., ., symlinks in, out, looping, dangling, absolute
// prefixes), read_file never returns outside content and write_file never changes anything
// outside the workspace; what it writes lands, by real path, inside a root.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { createWorkspaceTools } from '../../../src/tools/index.js';
import type { ToolHost } from '../../../src/core/ports.js';
import { makeWorkspace, run, SECRET, type Workspace } from './workspace.fixture.js';

const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : Date.now() ^ (Math.random() * 2 ** 31);
console.log('fast-check seed', seed);

let ws: Workspace;
let host: ToolHost;

/** Everything under `dir` without following links: path → content, "<dir>" or "-> target". */
function snapshot(dir: string, skip: string[], out: Record<string, string> = {}): Record<string, string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (skip.includes(path)) continue;
    const st = lstatSync(path);
    if (st.isSymbolicLink()) out[path] = `-> ${readlinkSync(path)}`;
    else if (st.isDirectory()) {
      out[path] = '<dir>';
      snapshot(path, skip, out);
    } else out[path] = readFileSync(path, 'utf8');
  }
  return out;
}

const outsideState = (): Record<string, string> => snapshot(ws.root, [ws.cwd, ws.extra]);

before(() => {
  ws = makeWorkspace();
  host = createWorkspaceTools({ cwd: ws.cwd, additionalDirectories: [ws.extra] });
  mkdirSync(join(ws.cwd, 'd'));
  writeFileSync(join(ws.cwd, 'f.txt'), 'inside\n');
  writeFileSync(join(ws.root, 'root-secret.txt'), SECRET);
  const links: Record<string, string> = {
    in: join(ws.cwd, 'd'),
    out: ws.outside,
    loop: 'loop',
    dang: join(ws.outside, 'dangling-target'),
    ex: ws.extra,
    up: '..',
    rel: 'd/../../outside',
    // Lexically `d/x` (inside); for the kernel `outside/deepdir/x`.
    sneaky: 'd/deep/../x',
  };
  for (const [name, target] of Object.entries(links)) symlinkSync(target, join(ws.cwd, name));
  mkdirSync(join(ws.outside, 'deepdir/inner'), { recursive: true });
  symlinkSync(join(ws.outside, 'deepdir/inner'), join(ws.cwd, 'd/deep'));
});
after(() => ws.dispose());

const segment = fc.constantFrom('..', '.', 'd', 'f.txt', 'in', 'out', 'loop', 'dang', 'ex', 'up', 'rel', 'sneaky', 'secret.txt', 'new1', 'new2');

test('no invented path reads or writes outside the workspace', async () => {
  const prefixes = ['', `${ws.cwd}/`, `${ws.root}/`, `${ws.outside}/`, `${ws.extra}/`];
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...prefixes), fc.array(segment, { minLength: 1, maxLength: 5 }), async (prefix, parts) => {
      const path = prefix + parts.join('/');
      // Compared per run, so that a failure shrinks to the path that caused it.
      const before = outsideState();
      const read = await run(host, 'read_file', { path });
      assert.doesNotMatch(read.output, /TOP SECRET/, `read ${path}`);
      const write = await run(host, 'write_file', { path, content: 'P' });
      assert.deepEqual(outsideState(), before, `write ${path} changed the outside`);
      if (!write.isError) {
        const real = realpathSync(path.startsWith('/') ? path : join(ws.cwd, path));
        const inside = [ws.cwd, ws.extra].some((root) => real === root || real.startsWith(root + '/'));
        assert.ok(inside, `write ${path} landed at ${real}`);
      } else {
        assert.ok(['path_outside_workspace', 'tool_failed'].includes(write.errorCode ?? ''), `${path}: ${write.errorCode} ${write.output}`);
      }
    }),
    { seed, numRuns: 400 },
  );
});
