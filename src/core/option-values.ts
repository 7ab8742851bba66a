/**
 * How a command line's values are read, the same for the CLI (src/cli/args.ts) and `troupe serve`
 * (src/daemon/serve.command.ts), which may not import each other; and the milliseconds an operator
 * gives through the environment, the same for every variable that holds some.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Logger } from './ports.js';

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

/** The options a command line was parsed with (node:util parseArgs). */
export type ArgsOptions = NonNullable<ParseArgsConfig['options']>;

/**
 * For a command whose words may start with a dash (a prompt, a text, a file name): how to name them
 * in the hint of an unknown option, which is then how to give such a word (after `--`).
 */
export interface DashWords {
  /** The command as typed before its arguments: `troupe run`. */
  command: string;
  /** What such a word is, with its article: `a prompt`. */
  what: string;
}

/**
 * One line for a node:util parseArgs error, in the project's words (docs/cli.md §Errors), chosen by
 * the error's `code`. Node's own are not: an unknown option's is two sentences ending in unbalanced
 * quotes (`… as in '-- "--foo"`), an option missing its value names it `'-c, --cwd <value>'`, and
 * one followed by a value that starts with a dash takes three lines. Node's error names nothing
 * but in its message text: the offending argument is found again here in the tokens of the same
 * arguments parsed without `strict` (the same tokens; strict mode only checks them, in order, and
 * throws at the first that fails), so that no message text is matched.
 */
export function parseArgsProblem(err: unknown, args: readonly string[], options: ArgsOptions, dash?: DashWords): string {
  const fallback = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.replace(/\.$/, '');
  let tokens;
  try {
    tokens = parseArgs({ args: [...args], options, allowPositionals: true, strict: false, tokens: true }).tokens;
  } catch {
    return fallback;
  }
  const known = (name: string) => Object.hasOwn(options, name);
  switch ((err as { code?: unknown } | undefined)?.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const t = tokens.find((t) => t.kind === 'option' && !known(t.name));
      if (t?.kind !== 'option') break;
      // `-yx`: Node names the `-x` in it; the whole argument is what would go after `--`.
      const typed = args[t.index]!;
      const inArg = typed === t.rawName || typed.startsWith(`${t.rawName}=`) ? '' : ` in '${typed}'`;
      if (!dash) return `unknown option '${t.rawName}'${inArg}`;
      // The words before it stay before the `--`: `troupe steer ID -- "--foo"`.
      const before = tokens.flatMap((p) => (p.kind === 'positional' && p.index < t.index ? [` ${shellWord(p.value)}`] : []));
      return `unknown option '${t.rawName}'${inArg} (${dash.what} that starts with '-' goes after '--': ${dash.command}${before.join('')} -- ${quoted(typed)})`;
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      for (const t of tokens) {
        if (t.kind !== 'option' || !known(t.name)) continue;
        if (options[t.name]!.type === 'boolean') {
          if (t.value !== undefined) return `${t.rawName} takes no value, got '${t.value}'`;
        } else if (t.value === undefined) {
          return `${t.rawName} needs a value`;
        } else if (!t.inlineValue && t.value.length > 1 && t.value.startsWith('-')) {
          // As typed (`-n`), and how to write such a value: with the long name (`--lines=-5`).
          return `${t.rawName} needs a value, and '${t.value}' looks like an option (a value that starts with '-' is written --${t.name}=${t.value})`;
        }
      }
      break;
    }
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL': {
      const t = tokens.find((t) => t.kind === 'positional');
      if (t?.kind === 'positional') return `unexpected argument '${t.value}'`;
      break;
    }
  }
  return fallback;
}

/** `word` in double quotes, as a POSIX shell reads it back; in single ones when something in it is special in double ones. */
function quoted(word: string): string {
  if (!/["$`\\!]/.test(word)) return `"${word}"`;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** `word` as a POSIX shell reads it back: as it is when nothing in it is special, else {@link quoted}. */
const shellWord = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : quoted(word));

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

/**
 * A timeout variable's milliseconds (msFromEnv): a whole number of 1 or more, at most MAX_TIMER_MS
 * (a larger one is that, with a warning); anything else the default, with a warning naming the
 * variable and what it held. The rule of the agent's `…_MS` time limits (MCP, editor answers).
 */
export function timeoutMsFromEnv(env: NodeJS.ProcessEnv, name: string, otherwise: number, logger: Logger): number {
  return msFromEnv(env, name, {
    otherwise,
    min: 1,
    max: MAX_TIMER_MS,
    bad: (value) => logger.warn(`${name} is not a whole number of milliseconds of 1 or more; using the default`, { value, defaultMs: otherwise }),
    over: (value) => {
      logger.warn(`${name} is more than the longest time troupe waits; using that`, { value, usedMs: MAX_TIMER_MS });
      return MAX_TIMER_MS;
    },
  });
}
