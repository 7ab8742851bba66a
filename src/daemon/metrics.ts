/**
 * A small Prometheus registry: counters, gauges read at scrape time, and histograms with fixed
 * buckets, rendered in the text exposition format (version 0.0.4) at GET /metrics.
 */
type Labels = Record<string, string>;

/** A label value as the format spells it: backslash, quote and line feed escaped, nothing lost. */
const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
/** HELP text escapes only backslash and line feed. */
const escapeHelp = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
/** One series' label set; sorted by name, so that the same labels given in another order are the same series. */
const key = (labels: Labels) =>
  Object.entries(labels)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
    .join(',');

export class Metrics {
  private readonly counters = new Map<string, { help: string; labelled: boolean; values: Map<string, number> }>();
  private readonly gauges = new Map<string, { help: string; read: () => number }>();
  /** Counters kept by their owners (plain numbers on a hot path), read at scrape time. */
  private readonly readCounters = new Map<string, { help: string; read: () => [Labels, number][] }>();
  private readonly histograms = new Map<string, { help: string; buckets: number[]; series: Map<string, { counts: number[]; sum: number; count: number }> }>();
  private readonly scraped: (() => void)[] = [];

  /** Runs after every render: gauges that report a window "since the last scrape" start a new one. */
  afterScrape(f: () => void): void {
    this.scraped.push(f);
  }

  /**
   * A family is registered once: a second registration of its name (of any kind) would be a second
   * family of that name in the exposition, which scrapers reject, or would strand the first one's updates.
   */
  private claim(name: string): void {
    if (this.counters.has(name) || this.readCounters.has(name) || this.gauges.has(name) || this.histograms.has(name)) throw new Error(`metric ${name} is already registered`);
  }

  /**
   * `labelled`: every sample carries labels. Such a family shows no sample until its first label set
   * is counted; an unlabelled `name 0` would be a series of its own that stops being reported then.
   */
  counter(name: string, help: string, { labelled = false } = {}): (labels?: Labels, by?: number) => void {
    this.claim(name);
    const c = { help, labelled, values: new Map<string, number>() };
    this.counters.set(name, c);
    return (labels = {}, by = 1) => {
      const k = key(labels);
      c.values.set(k, (c.values.get(k) ?? 0) + by);
    };
  }

  /**
   * A counter its owner keeps (a number it only ever adds to), read at scrape time: for counts on a
   * hot path, where `counter`'s per-call label key would cost more than the count.
   */
  counterFrom(name: string, help: string, read: () => [Labels, number][]): void {
    this.claim(name);
    this.readCounters.set(name, { help, read });
  }

  gauge(name: string, help: string, read: () => number): void {
    this.claim(name);
    this.gauges.set(name, { help, read });
  }

  /** `bounds`: bucket upper bounds in any order; rendered ascending (cumulative counts need it), `+Inf` added. */
  histogram(name: string, help: string, bounds: number[]): (value: number, labels?: Labels) => void {
    this.claim(name);
    const buckets = [...new Set(bounds.filter((b) => Number.isFinite(b)))].sort((a, b) => a - b);
    const h = { help, buckets, series: new Map<string, { counts: number[]; sum: number; count: number }>() };
    this.histograms.set(name, h);
    return (value, labels = {}) => {
      const k = key(labels);
      let s = h.series.get(k);
      if (!s) h.series.set(k, (s = { counts: buckets.map(() => 0), sum: 0, count: 0 }));
      buckets.forEach((b, i) => value <= b && s!.counts[i]!++);
      s.sum += value;
      s.count++;
    };
  }

  /** `newWindow: false` renders without running the afterScrape hooks (a HEAD, which is no scrape). */
  render({ newWindow = true }: { newWindow?: boolean } = {}): string {
    const out: string[] = [];
    const braces = (k: string) => (k ? `{${k}}` : '');
    for (const [name, c] of this.counters) {
      out.push(`# HELP ${name} ${escapeHelp(c.help)}`, `# TYPE ${name} counter`);
      if (c.values.size === 0 && !c.labelled) out.push(`${name} 0`);
      for (const [k, v] of c.values) out.push(`${name}${braces(k)} ${v}`);
    }
    for (const [name, c] of this.readCounters) {
      out.push(`# HELP ${name} ${escapeHelp(c.help)}`, `# TYPE ${name} counter`);
      for (const [labels, v] of c.read()) out.push(`${name}${braces(key(labels))} ${v}`);
    }
    for (const [name, g] of this.gauges) out.push(`# HELP ${name} ${escapeHelp(g.help)}`, `# TYPE ${name} gauge`, `${name} ${g.read()}`);
    for (const [name, h] of this.histograms) {
      out.push(`# HELP ${name} ${escapeHelp(h.help)}`, `# TYPE ${name} histogram`);
      for (const [k, s] of h.series) {
        const sep = k ? `${k},` : '';
        h.buckets.forEach((b, i) => out.push(`${name}_bucket{${sep}le="${b}"} ${s.counts[i]}`));
        out.push(`${name}_bucket{${sep}le="+Inf"} ${s.count}`, `${name}_sum${braces(k)} ${s.sum}`, `${name}_count${braces(k)} ${s.count}`);
      }
    }
    if (newWindow) for (const f of this.scraped) f();
    return out.join('\n') + '\n';
  }
}
