/**
 * Where `troupe acp`'s start-up time and memory go: the cost of importing each heavy module alone
 * in a fresh `node` process (time of the dynamic import, and RSS once it is loaded), next to an
 * empty process. Modules share dependencies (zod is inside the ACP SDK's figure too), so the
 * figures overlap; they say what each costs on its own, which is what lazy-loading it would save.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { summarize } from './acp-stats.js';

/** Bare specifiers resolve from the repository root; troupe's own modules are compiled files. */
export const IMPORT_TARGETS: { name: string; specifier: string }[] = [
  { name: '(nothing)', specifier: '' },
  { name: '@agentclientprotocol/sdk', specifier: '@agentclientprotocol/sdk' },
  { name: 'zod', specifier: 'zod' },
  { name: 'xstate', specifier: 'xstate' },
  { name: 'msgpackr', specifier: 'msgpackr' },
  { name: '@anthropic-ai/sdk', specifier: '@anthropic-ai/sdk' },
  { name: 'openai', specifier: 'openai' },
  { name: '@google/genai', specifier: '@google/genai' },
  { name: 'src/providers/registry.ts', specifier: new URL('../src/providers/registry.js', import.meta.url).href },
  { name: 'src/acp/acp.command.ts (all of troupe acp)', specifier: new URL('../src/acp/acp.command.js', import.meta.url).href },
];

function importOnce(specifier: string, cwd: string): Promise<{ ms: number; rssMiB: number }> {
  const code = `const t = performance.now(); ${specifier ? `await import(${JSON.stringify(specifier)});` : ''} const ms = performance.now() - t; process.stdout.write(JSON.stringify({ ms, rssMiB: process.memoryUsage().rss / 1048576 }));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  return new Promise((resolve, reject) =>
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`import ${specifier} failed: ${err.slice(-1000)}`)))),
  );
}

/** p50 import time and RSS of each target over `runs` fresh processes, run from `cwd`. */
export async function importCosts(runs: number, cwd = fileURLToPath(new URL('../..', import.meta.url))) {
  const out: Record<string, { importMs: number; rssMiB: number }> = {};
  for (const t of IMPORT_TARGETS) {
    const samples = [];
    for (let i = 0; i < runs; i++) samples.push(await importOnce(t.specifier, cwd));
    out[t.name] = { importMs: summarize(samples.map((s) => s.ms), 1).p50, rssMiB: summarize(samples.map((s) => s.rssMiB), 1).p50 };
  }
  return out;
}
