/** Percentiles and target checks for the ACP benchmarks. */

export interface Summary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits;

/** Nearest-rank percentiles (no interpolation: every figure is a value that was measured). */
export function summarize(xs: readonly number[], digits = 2): Summary {
  if (xs.length === 0) throw new Error('summarize: no samples');
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
  return {
    n: s.length,
    p50: round(at(50), digits),
    p90: round(at(90), digits),
    p99: round(at(99), digits),
    mean: round(s.reduce((a, b) => a + b, 0) / s.length, digits),
    min: round(s[0]!, digits),
    max: round(s.at(-1)!, digits),
  };
}

/** `a / b` on p50 and mean, rounded: how many baselines one troupe operation costs. */
export function ratio(a: Summary, b: Summary): { p50: number; mean: number } {
  return { p50: round(a.p50 / b.p50), mean: round(a.mean / b.mean) };
}

export interface TargetCheck {
  target: string;
  limit: number;
  measured: number;
  met: boolean;
}

/** A target of the issue, checked against the statistic it names. */
export function targetCheck(target: string, limit: number, measured: number): TargetCheck {
  return { target, limit, measured, met: measured <= limit };
}
