// docs/daemon.md is what an operator reads to run and monitor the daemon: it must name what the
// built program has. Its `troupe serve` option table against the options `troupe serve` takes and
// the defaults its --help gives, and its /metrics names against a real scrape (spec/daemon.md's
// names too: none may name a metric that does not exist).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { runEach } from '../../support/cli/cli-harness.js';
import { Daemon } from '../../support/daemon.js';
import { parsePrometheusText } from '../../support/prometheus-text.js';

const BIN = resolve('bin/troupe.js');
/** `troupe serve …args` run to its end: its exit status and what it printed. */
const serve = (...args: string[]) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
    const child = execFile(process.execPath, [BIN, 'serve', ...args], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } }, (_err, stdout, stderr) => done({ status: child.exitCode, stdout, stderr }));
  });

/** `a_{x,y}_b` → `a_x_b`, `a_y_b`: the docs write metric families of one pattern once. */
function expandBraces(name: string): string[] {
  const m = /^(.*?)\{([^{}]*)\}(.*)$/.exec(name);
  if (!m) return [name];
  return m[2]!.split(',').flatMap((alt) => expandBraces(`${m[1]}${alt}${m[3]}`));
}

/** The metric names a document mentions (labels dropped, brace patterns expanded). */
function metricNames(md: string): Set<string> {
  const names = new Set<string>();
  // Braces right after an underscore are alternatives (`…_{p50,p99,max}_seconds`); after a name,
  // its labels (`troupe_child_exits_total{reason,crashed}`), which are not part of it.
  for (const [raw] of md.matchAll(/troupe_[a-z0-9_]*(?:(?<=_)\{[a-z0-9_,]+\}[a-z0-9_]*)*/g)) for (const n of expandBraces(raw)) names.add(n);
  return names;
}

test('docs/daemon.md names every /metrics family, and the docs name no metric that does not exist', async (t) => {
  const d = await Daemon.start();
  t.after(() => d.stop());
  const scrape = await (await fetch(`${d.url}/metrics`, { headers: d.headers })).text();
  const families = [...parsePrometheusText(scrape).keys()];
  assert.ok(families.length > 20, 'the scrape has the daemon families');
  const docs = metricNames(readFileSync('docs/daemon.md', 'utf8'));
  const undocumented = families.filter((f) => !docs.has(f));
  assert.deepEqual(undocumented, [], 'families of /metrics that docs/daemon.md does not name');
  // A histogram's series carry suffixes of its family's name.
  const exists = (n: string) => families.includes(n) || families.some((f) => [`${f}_bucket`, `${f}_sum`, `${f}_count`].includes(n));
  for (const file of ['docs/daemon.md', 'spec/daemon.md']) {
    const unknown = [...metricNames(readFileSync(file, 'utf8'))].filter((n) => !exists(n));
    assert.deepEqual(unknown, [], `${file} names metrics /metrics does not have`);
  }
});

test("docs/daemon.md's option table is the options of `troupe serve`, with the defaults of its --help", async () => {
  const md = readFileSync('docs/daemon.md', 'utf8');
  const table = md.slice(md.indexOf('| option | default | meaning |'));
  const rows = table.slice(0, table.indexOf('\n\n')).split('\n').slice(2);
  const documented = new Map<string, string>();
  for (const row of rows) {
    const [options, defaults] = row.split(' | ').map((c) => c.replace(/^\| /, ''));
    const names = [...options!.matchAll(/--[a-z-]+/g)].map((m) => m[0]);
    // `--a N` / `--b N` | `1 / 2`: one default each; `--tls-cert F --tls-key F` | none: both none.
    const values = defaults!.replace(/`/g, '').split(' / ');
    names.forEach((n, i) => documented.set(n, values.length === names.length ? values[i]! : values[0]!));
  }
  const help = await serve('--help');
  assert.equal(help.status, 0);
  const helped = new Map<string, string>();
  // An option's text may go on over indented lines: its default can be on one of them.
  const lines = help.stdout.split('\n').reduce<string[]>((acc, l) => (/^ {4,}\S/.test(l) && acc.length ? (acc[acc.length - 1] += ` ${l.trim()}`, acc) : [...acc, l]), []);
  for (const line of lines) {
    const m = /^ {2}(--[a-z-]+)(?: [A-Z]+)?(?: (--[a-z-]+) [A-Z]+)?\s.*?(?:\(default ([^;:)]+)|$)/.exec(line);
    if (!m) continue;
    for (const name of [m[1], m[2]].filter(Boolean) as string[]) helped.set(name, m[3] ?? 'none');
  }
  assert.deepEqual([...documented.keys()].sort(), [...helped.keys()].sort(), 'the options of the table and of --help');
  for (const [name, value] of helped) {
    if (value === 'none') assert.match(documented.get(name)!, /^(none|off)$/, `${name}: no default in --help`);
    else assert.equal(documented.get(name), value, `${name}: the default in docs/daemon.md and in --help`);
  }
  // And the parser takes each of them: a bad value is its own usage error, never "unknown option".
  // A few at a time (each is a process start), `--port=x` last: a usage error before the daemon
  // would take a home's lock, whatever `name` is.
  for (const [name, r] of await runEach([...helped.keys()], (name) => serve(name === '--snapshot' ? `${name}=x` : `${name}=1`, '--port=x'))) {
    assert.equal(r.status, 2, `${name}: ${r.stderr}`);
    assert.doesNotMatch(r.stderr, /unknown option/i, `troupe serve takes ${name}`);
  }
});
