// The dependency rule of DESIGN.md §2, checked on every import of every src/ file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const SRC = resolve('src');

/** Which src/ layers each layer may import (besides itself). */
const ALLOWED: Record<string, string[]> = {
  core: [],
  machines: ['core'],
  wire: ['core'],
  store: ['core', 'wire'],
  providers: ['core'],
  tools: ['core'],
  actors: ['core', 'machines', 'wire', 'store'],
  acp: ['core', 'machines', 'wire', 'store', 'providers', 'tools', 'actors'],
  daemon: ['core', 'machines', 'wire', 'store', 'providers', 'tools', 'actors', 'acp'],
  // The CLI talks to the daemon over HTTP: never daemon/ or actors/. It reads local logs (store)
  // and the model catalogue (providers).
  cli: ['core', 'wire', 'store', 'providers'],
  main: ['cli', 'acp', 'daemon', 'core'],
  // The inspector page runs in a browser: it may take troupe's types (`import type`, erased when
  // compiled) and nothing else; a value import would break the page, which its e2e test would show.
  'inspector-ui': ['core', 'machines', 'store'],
};

/** Packages that only one folder may import. */
const FENCED: Record<string, string> = {
  '@anthropic-ai/sdk': 'providers/anthropic',
  openai: 'providers/openai',
  '@google/genai': 'providers/google',
  'uWebSockets.js': 'daemon/http',
  '@modelcontextprotocol/sdk': 'tools/mcp',
};

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

function specifiers(source: string): string[] {
  const found: string[] = [];
  const patterns = [/\bfrom\s+['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g, /^\s*import\s+['"]([^'"]+)['"]/gm];
  for (const re of patterns) for (const m of source.matchAll(re)) found.push(m[1]!);
  return found;
}

/** `providers/anthropic/x.ts` → layer `providers`, unit `providers/anthropic`. */
function placeOf(file: string): { layer: string; unit: string } {
  const parts = relative(SRC, file).split(/[\\/]/);
  if (parts.length === 1) return { layer: parts[0]!.replace(/\.ts$/, ''), unit: parts[0]!.replace(/\.ts$/, '') };
  const layer = parts[0]!;
  const unit = layer === 'providers' || layer === 'daemon' ? `${layer}/${parts.length > 2 ? parts[1] : ''}` : layer;
  return { layer, unit };
}

/** Why importing `spec` from `file` breaks the rule, or undefined if it does not. */
function edgeViolation(file: string, spec: string): string | undefined {
  const from = placeOf(file);
  const where = relative(SRC, file);
  if (!spec.startsWith('.')) {
    const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
    const home = FENCED[pkg];
    return home && !where.startsWith(home + '/') ? `${where} imports ${pkg} (only ${home}/ may)` : undefined;
  }
  const target = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
  if (!target.startsWith(SRC)) return `${where} imports outside src/: ${spec}`;
  const to = placeOf(target);
  if (to.layer === from.layer) {
    // Files directly in providers/ (the registry) may import every vendor; a vendor folder may
    // import neither another vendor nor the registry.
    const siblingVendor = from.layer === 'providers' && from.unit !== 'providers/' && to.unit !== from.unit;
    return siblingVendor ? `${where} → ${spec} (sibling provider)` : undefined;
  }
  return (ALLOWED[from.layer] ?? []).includes(to.layer) ? undefined : `${where} → ${spec} (${from.layer} may not import ${to.layer})`;
}

test('every src/ import follows the dependency rule', () => {
  const files = walk(SRC);
  assert.ok(files.length > 5, 'expected to find the source files');
  const found = files.flatMap((file) => specifiers(readFileSync(file, 'utf8')).map((spec) => edgeViolation(file, spec)));
  assert.deepEqual(found.filter(Boolean), []);
});

test('the rule checker itself catches a forbidden edge', () => {
  const cases: [string, string][] = [
    ['core/x.ts', '../actors/session.actor.js'],
    ['cli/x.ts', '../daemon/relay.js'],
    ['providers/openai/x.ts', '../anthropic/adapter.js'],
    ['actors/x.ts', '@anthropic-ai/sdk'],
    ['daemon/relay.ts', 'uWebSockets.js'],
  ];
  for (const [file, spec] of cases) assert.ok(edgeViolation(join(SRC, file), spec), `should flag ${file} → ${spec}`);
  assert.equal(edgeViolation(join(SRC, 'actors/x.ts'), '../machines/turn.machine.js'), undefined);
  assert.equal(edgeViolation(join(SRC, 'daemon/http/server.ts'), 'uWebSockets.js'), undefined);
  assert.equal(edgeViolation(join(SRC, 'providers/registry.ts'), './openai/index.js'), undefined);
  assert.ok(edgeViolation(join(SRC, 'providers/openai/x.ts'), '../registry.js'));
});
