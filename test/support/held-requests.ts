// Requests a test client does not answer until the test says (an editor that never answers one, or
// answers it late): the agent's requests to the client by method (`fs/read_text_file`,
// `terminal/create`, …). Shared by the stdio test client (acp-child.ts) and its terminals
// (client-terminals.ts).

interface Held {
  method: string;
  /** Answers now, as the client would have (runs the client's handler). */
  answer(): void;
}

export class HeldRequests {
  /** The methods held. */
  readonly methods = new Set<string>();
  /** Held requests not yet answered, in the order they came. */
  readonly waiting: Held[] = [];
  /** Methods of the held requests the agent withdrew (`$/cancel_request`), in the order withdrawn. */
  readonly withdrawn: string[] = [];

  /** What `handle` gives, at once, or once the test answers it when `method` is held. */
  serve<T>(method: string, signal: AbortSignal, handle: () => T | Promise<T>): T | Promise<T> {
    if (!this.methods.has(method)) return handle();
    signal.addEventListener('abort', () => this.withdrawn.push(method), { once: true });
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ method, answer: () => void Promise.resolve().then(handle).then(resolve, reject) });
    });
  }

  /** Answers every held request (late), and holds no more. */
  answerAll(): void {
    this.methods.clear();
    for (const held of this.waiting.splice(0)) held.answer();
  }
}
