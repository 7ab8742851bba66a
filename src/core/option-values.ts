/**
 * How a command line's values are read, the same for the CLI (src/cli/args.ts) and `troupe serve`
 * (src/daemon/serve.command.ts), which may not import each other; and the milliseconds an operator
 * gives through the environment, the same for every variable that holds some.
 */

/** The longest delay a Node timer honours (about 24.8 days): a longer one fires after 1 ms (TimeoutOverflowWarning). */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * `raw` as a non-negative integer when it is decimal digits only (and a safe integer), else
 * undefined. Number() would also take '', ' 7', '0x10', '1e3', '1.0' or '1e21', and a port or a
 * cursor given that way is a mistake, not a number.
 */
export function decimalInteger(raw: string): number | undefined {
  if (!/^\d+$/.test(raw)) return undefined;
  const n = Number(raw);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * One line for a node:util parseArgs error. Its "argument is ambiguous" message for a value that
 * starts with a dash (`--after -1`, `-n -5`) is three lines, of which the first says nothing useful:
 * this one names the option as typed and the value, and how to give such a value anyway (the
 * option's long name, which Node's last line gives for a short one).
 */
export function parseArgsProblem(err: unknown, args: readonly string[]): string {
  const message = err instanceof Error ? err.message : String(err);
  const typed = /^Option '(-[^']+)' argument is ambiguous/.exec(message)?.[1];
  if (typed) {
    const long = /use '(--[^=']+)=-XYZ'/.exec(message)?.[1] ?? typed;
    const at = args.indexOf(typed);
    const value = at >= 0 ? args[at + 1] : undefined;
    if (value !== undefined) return `${typed} needs a value, and '${value}' looks like an option (a value that starts with '-' is written ${long}=${value})`;
    return `${typed} needs a value`;
  }
  return message.split('\n')[0]!.replace(/\.$/, '');
}

/** How one environment variable's milliseconds are read by {@link msFromEnv}. */
export interface MsRule {
  /** What an unset or blank variable, or a bad value, means. */
  otherwise: number;
  /** The least whole number taken (0 where 0 means something, such as "never"). */
  min: number;
  /** The greatest whole number taken as it is. */
  max: number;
  /** Told of a bad value (not a whole number of `min` or more), before `otherwise` is used. */
  bad?: (raw: string) => void;
  /** What a whole number over `max` means; without it, such a value is bad. */
  over?: (raw: string) => number;
}

/**
 * The milliseconds in environment variable `name` by `rule`: unset or blank, `rule.otherwise`; a
 * whole number in decimal digits (spaces around it allowed) from `min` to `max`, that number; one
 * over `max`, what `rule.over` says; anything else (negative, fractional, `1e6`, `0x10`, not a
 * number) `otherwise`, after `rule.bad` is told. Number() alone would take '', '1e6' or '0x10', and
 * a timer given more than MAX_TIMER_MS runs after 1 ms: the places that read such variables each
 * had their own rule, and one of them let such a value through (until 2026-12-07).
 */
export function msFromEnv(env: NodeJS.ProcessEnv, name: string, rule: MsRule): number {
  const raw = env[name];
  const text = raw?.trim() ?? '';
  if (raw === undefined || text === '') return rule.otherwise;
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (n >= rule.min && n <= rule.max) return n;
  if (n > rule.max && rule.over) return rule.over(raw);
  rule.bad?.(raw);
  return rule.otherwise;
}
