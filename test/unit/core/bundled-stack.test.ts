// A logged stack of the minified agent bundle names its source's places (src/core/bundled-stack.ts):
// the bundle keeps no function names (scripts/bundle-acp.js), so the map is what makes it readable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { readableStack } from '../../../src/core/bundled-stack.js';

test('a stack thrown in a minified bundle is mapped to its source lines, other frames left as they are', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-stack-'));
  try {
    writeFileSync(
      join(dir, 'thrower.js'),
      ['function parseTheThing(x) {', '  if (x > 1) {', "    throw new Error('boom');", '  }', '  return x;', '}', 'parseTheThing(2);', ''].join('\n'),
    );
    const out = join(dir, 'out.cjs');
    await build({ entryPoints: [join(dir, 'thrower.js')], outfile: out, bundle: true, minify: true, sourcemap: true, platform: 'node', format: 'cjs', logLevel: 'silent' });
    const run = spawnSync(process.execPath, ['-e', `try { require(${JSON.stringify(out)}) } catch (e) { process.stdout.write(e.stack) }`], { encoding: 'utf8' });
    const stack = run.stdout;
    assert.match(stack, /out\.cjs:1:\d+/, stack); // minified: one line

    const mapped = readableStack(stack, (f) => f === out);
    const lines = mapped.split('\n');
    assert.equal(lines[0], 'Error: boom');
    assert.match(lines[1]!, /thrower\.js:3:11\b/, mapped); // the throw, in the source
    assert.match(lines[1]!, /\[1:\d+\]/, mapped); // the bundled place, kept after it
    assert.ok(lines.some((l) => /thrower\.js:7:\d+/.test(l)), mapped); // the call
    // Node's own frames are not the bundle's: unchanged.
    const own = stack.split('\n').filter((l) => l.includes('node:internal'));
    assert.ok(own.length > 0);
    for (const l of own) assert.ok(lines.includes(l), l);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a frame in the agent script (dist/acp-script/acp.cjs) is mapped to src/ through the build's map", () => {
  const script = resolve('dist/acp-script/acp.cjs');
  const text = readFileSync(script, 'utf8').split('\n');
  // A place the build certainly maps: where the agent makes its logger (src/acp/acp.command.ts).
  const line = text.findIndex((l) => l.includes('"troupe acp"'));
  assert.ok(line >= 0, 'the agent script names its logger');
  const col = text[line]!.indexOf('"troupe acp"');
  const frame = `    at t (${script}:${line + 1}:${col + 1})`;
  const mapped = readableStack(`Error: x\n${frame}\n    at file:///elsewhere/other.js:1:2`);
  assert.match(mapped, /at t \(src\/acp\/acp\.command\.ts:\d+:\d+\) \[\d+:\d+\]/, mapped);
  assert.match(mapped, /at file:\/\/\/elsewhere\/other\.js:1:2$/, mapped);
});
