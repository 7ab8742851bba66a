// One seed per test file, printed so that a failing run can be replayed with FC_SEED=<seed>.
export function fcSeed(label: string): number {
  const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : (Date.now() ^ (Math.random() * 2 ** 31)) | 0;
  console.log(`# fast-check seed for ${label}: ${seed} (replay with FC_SEED=${seed})`);
  return seed;
}

/** Runs per property: at least `min`, or FC_RUNS when it asks for more. */
export function fcRuns(min: number): number {
  return Math.max(min, Number(process.env.FC_RUNS ?? 0));
}
