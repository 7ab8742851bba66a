/**
 * A small Prometheus registry: counters, gauges read at scrape time, and histograms with fixed
 * buckets, rendered in the text exposition format (version 0.0.4) at GET /metrics.
 */
type Labels = Record<string, string>;

const key = (labels: Labels) => Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/["\\\n]/g, '_')}"`).join(',');

export class Metrics {
  private readonly counters = new Map<string, { help: string; values: Map<string, number> }>();
  private readonly gauges = new Map<string, { help: string; read: () => number }>();
  private readonly histograms = new Map<string, { help: string; buckets: number[]; series: Map<string, { counts: number[]; sum: number; count: number }> }>();
  private readonly scraped: (() => void)[] = [];

  /** Runs after every render: gauges that report a window "since the last scrape" start a new one. */
  afterScrape(f: () => void): void {
    this.scraped.push(f);
  }

  counter(name: string, help: string): (labels?: Labels, by?: number) => void {
    const c = { help, values: new Map<string, number>() };
    this.counters.set(name, c);
    return (labels = {}, by = 1) => c.values.set(key(labels), (c.values.get(key(labels)) ?? 0) + by);
  }

  gauge(name: string, help: string, read: () => number): void {
    this.gauges.set(name, { help, read });
  }

  histogram(name: string, help: string, buckets: number[]): (value: number, labels?: Labels) => void {
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

  render(): string {
    const out: string[] = [];
    const braces = (k: string) => (k ? `{${k}}` : '');
    for (const [name, c] of this.counters) {
      out.push(`# HELP ${name} ${c.help}`, `# TYPE ${name} counter`);
      if (c.values.size === 0) out.push(`${name} 0`);
      for (const [k, v] of c.values) out.push(`${name}${braces(k)} ${v}`);
    }
    for (const [name, g] of this.gauges) out.push(`# HELP ${name} ${g.help}`, `# TYPE ${name} gauge`, `${name} ${g.read()}`);
    for (const [name, h] of this.histograms) {
      out.push(`# HELP ${name} ${h.help}`, `# TYPE ${name} histogram`);
      for (const [k, s] of h.series) {
        const sep = k ? `${k},` : '';
        h.buckets.forEach((b, i) => out.push(`${name}_bucket{${sep}le="${b}"} ${s.counts[i]}`));
        out.push(`${name}_bucket{${sep}le="+Inf"} ${s.count}`, `${name}_sum${braces(k)} ${s.sum}`, `${name}_count${braces(k)} ${s.count}`);
      }
    }
    for (const f of this.scraped) f();
    return out.join('\n') + '\n';
  }
}
