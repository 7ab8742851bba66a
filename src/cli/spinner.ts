/**
 * The "waiting for the agent" spinner: stderr only, only on a TTY, and only while the cursor sits at
 * the start of a line (so it never overwrites half-printed text).
 */
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export class Spinner {
  private timer: NodeJS.Timeout | undefined;
  private frame = 0;
  private shown = false;
  readonly enabled: boolean;

  constructor(
    private readonly stream: NodeJS.WritableStream,
    private readonly label: string,
    enabled: boolean,
  ) {
    this.enabled = enabled && Boolean((stream as { isTTY?: boolean }).isTTY);
  }

  /** Shows the spinner until `stop()`; `canDraw` says whether the line is free. */
  start(canDraw: () => boolean): void {
    if (!this.enabled || this.timer) return;
    this.timer = setInterval(() => {
      if (!canDraw()) return;
      this.stream.write(`\r${FRAMES[this.frame++ % FRAMES.length]} ${this.label}\x1b[K`);
      this.shown = true;
    }, 80);
    this.timer.unref();
  }

  /** Hides it (clearing the line it drew on). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.shown) this.stream.write('\r\x1b[K');
    this.shown = false;
  }
}
