/**
 * Terminal colours. Off when NO_COLOR is set, with --no-color, or when the stream is not a TTY, so
 * piped output is plain text.
 */
export interface Style {
  enabled: boolean;
  dim(s: string): string;
  bold(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
  magenta(s: string): string;
}

const wrap = (on: boolean, open: number, close: number) => (s: string) => (on ? `\x1b[${open}m${s}\x1b[${close}m` : s);

/** Colours for `stream`, honouring NO_COLOR and an explicit --no-color. */
export function makeStyle(stream: NodeJS.WritableStream, env: NodeJS.ProcessEnv, noColor = false): Style {
  const tty = Boolean((stream as { isTTY?: boolean }).isTTY);
  const enabled = tty && !noColor && !(env.NO_COLOR !== undefined && env.NO_COLOR !== '');
  return {
    enabled,
    dim: wrap(enabled, 2, 22),
    bold: wrap(enabled, 1, 22),
    red: wrap(enabled, 31, 39),
    green: wrap(enabled, 32, 39),
    yellow: wrap(enabled, 33, 39),
    cyan: wrap(enabled, 36, 39),
    magenta: wrap(enabled, 35, 39),
  };
}
