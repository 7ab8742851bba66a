// A strict reader of the Prometheus text exposition format (0.0.4), for tests of GET /metrics:
// it throws on anything a scraper could misread, rather than take what a regex happens to match.
// https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** Parses and checks `text`; throws an Error naming the line for the first violation. */
export function parsePrometheusText(text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a line feed');
  const families = new Map<string, Family>();
  const closed = new Set<string>();
  let current: Family | undefined;
  const seen = new Set<string>();
  const typed = new Set<string>();
  const lines = text.slice(0, -1).split('\n');
  lines.forEach((line, i) => {
    const where = `line ${i + 1}: ${JSON.stringify(line)}`;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta as unknown as [string, 'HELP' | 'TYPE', string, string];
      if (!NAME.test(name)) throw new Error(`bad metric name, ${where}`);
      const f = open(name, where);
      if (kind === 'HELP') {
        if (f.help !== '') throw new Error(`second HELP for ${name}, ${where}`);
        if (!/^(?:[^\\]|\\[\\n])*$/.test(rest)) throw new Error(`bad escape in HELP, ${where}`);
        f.help = rest.replace(/\\(\\|n)/g, (_, c: string) => (c === 'n' ? '\n' : '\\')) || ' ';
      } else {
        if (f.samples.length > 0) throw new Error(`TYPE after samples of ${name}, ${where}`);
        if (!TYPES.has(rest) || typed.has(name)) throw new Error(`bad or second TYPE, ${where}`);
        typed.add(name);
        f.type = rest as Family['type'];
      }
      return;
    }
    if (line.startsWith('#') || line.trim() === '') return;
    const sample = parseSample(line, where);
    const family = familyOf(sample.name, families) ?? open(sample.name, where);
    if (family !== current) throw new Error(`samples of ${family.name} are not together, ${where}`);
    const series = `${sample.name}{${Object.entries(sample.labels).sort().map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}}`;
    if (seen.has(series)) throw new Error(`duplicate series ${series}, ${where}`);
    seen.add(series);
    family.samples.push(sample);
  });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;

  function open(name: string, where: string): Family {
    const existing = families.get(name);
    if (existing && existing === current) return existing;
    if (existing || closed.has(name)) throw new Error(`family ${name} appears twice, ${where}`);
    if (current) closed.add(current.name);
    current = { name, type: 'untyped', help: '', samples: [] };
    families.set(name, current);
    return current;
  }
}

/** The family a sample belongs to: its own name, or a histogram's/summary's with a suffix. */
function familyOf(name: string, families: Map<string, Family>): Family | undefined {
  const own = families.get(name);
  if (own) return own;
  const m = /^(.*)_(bucket|sum|count)$/.exec(name);
  const base = m ? families.get(m[1]!) : undefined;
  return base && (base.type === 'histogram' || base.type === 'summary') ? base : undefined;
}

function parseSample(line: string, where: string): Sample {
  const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( -?\d+)?$/.exec(line);
  if (!m) throw new Error(`not a sample, ${where}`);
  const value = m[4] === '+Inf' ? Infinity : m[4] === '-Inf' ? -Infinity : m[4] === 'NaN' ? NaN : Number(m[4]);
  if (Number.isNaN(value) && m[4] !== 'NaN') throw new Error(`bad value, ${where}`);
  return { name: m[1]!, labels: m[3] === undefined ? {} : parseLabels(m[3], where), value };
}

function parseLabels(body: string, where: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = body;
  while (rest.length > 0) {
    const m = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/.exec(rest);
    if (!m || !LABEL.test(m[1]!)) throw new Error(`bad label set, ${where}`);
    if (m[1]! in labels) throw new Error(`label ${m[1]} twice, ${where}`);
    labels[m[1]!] = m[2]!.replace(/\\([\\"n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
    rest = rest.slice(m[0].length);
    if (m[3] === ',' && rest.length === 0) break;
  }
  return labels;
}

/** Per label set: buckets ascending by `le`, counts cumulative, a `+Inf` bucket equal to `_count`, and a `_sum`. */
function checkHistogram(f: Family): void {
  const groups = new Map<string, { buckets: [number, number][]; sum?: number; count?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const g = groups.get(key) ?? { buckets: [] };
    groups.set(key, g);
    if (s.name === `${f.name}_bucket`) {
      if (le === undefined) throw new Error(`${f.name}_bucket without le`);
      const bound = le === '+Inf' ? Infinity : Number(le);
      if (Number.isNaN(bound)) throw new Error(`${f.name}: le="${le}" is not a number`);
      g.buckets.push([bound, s.value]);
    } else if (s.name === `${f.name}_sum`) g.sum = s.value;
    else if (s.name === `${f.name}_count`) g.count = s.value;
    else throw new Error(`${s.name} in histogram ${f.name}`);
  }
  for (const [key, g] of groups) {
    for (let i = 1; i < g.buckets.length; i++) {
      if (!(g.buckets[i]![0] > g.buckets[i - 1]![0])) throw new Error(`${f.name}${key}: buckets not in ascending le order`);
      if (g.buckets[i]![1] < g.buckets[i - 1]![1]) throw new Error(`${f.name}${key}: bucket counts are not cumulative`);
    }
    const last = g.buckets.at(-1);
    if (!last || last[0] !== Infinity) throw new Error(`${f.name}${key}: no +Inf bucket`);
    if (g.count === undefined || g.sum === undefined) throw new Error(`${f.name}${key}: no _sum or _count`);
    if (last[1] !== g.count) throw new Error(`${f.name}${key}: +Inf bucket ${last[1]} is not _count ${g.count}`);
  }
}
