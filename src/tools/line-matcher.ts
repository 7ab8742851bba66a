/**
 * grep's regular expression, run in a worker thread. A model-written regex can backtrack
 * catastrophically (`(a+)+$` on a line of 40 `a`s takes minutes, on 100 longer than the universe):
 * V8 cannot interrupt a running regex on its own thread, so on the agent's thread it would freeze
 * the whole session (no cancel, no other request, no heartbeat). In a worker, the agent stays
 * responsive and `terminate()` stops the match at once on cancel or timeout.
 *
 * The worker is eval'd source, not a file: it works the same from the source tree, the bundle and
 * the startup snapshot. It only matches; reading, skipping and formatting stay in grep.
 */
import { Worker } from 'node:worker_threads';
import { TroupeError } from '../core/errors.js';

/** One line that matched: the text's index in its batch, the 1-based line, the line (cut). */
export type LineHit = [text: number, line: number, content: string];

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const re = new RegExp(workerData.source, workerData.flags);
parentPort.on('message', ({ texts, maxHits, maxChars }) => {
  const hits = [];
  for (let t = 0; t < texts.length && hits.length < maxHits; t++) {
    const lines = texts[t].split('\\n');
    for (let i = 0; i < lines.length && hits.length < maxHits; i++) {
      // The \\r of a CRLF line ending is not part of the line (grep shows none), so that ;$ matches there.
      const line = lines[i].endsWith('\\r') ? lines[i].slice(0, -1) : lines[i];
      if (re.test(line)) hits.push([t, i + 1, line.slice(0, maxChars + 1)]);
    }
  }
  parentPort.postMessage(hits);
});`;

export class LineMatcher {
  private readonly worker: Worker;
  private failure: Error | undefined;
  private pending: { resolve: (hits: LineHit[]) => void; reject: (err: Error) => void } | undefined;

  /** `regex` has already compiled on this thread (so the worker's compile cannot fail). */
  constructor(regex: RegExp, private readonly signal: AbortSignal, timeoutMs: number) {
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { source: regex.source, flags: regex.flags } });
    // Not unref'd: a search awaiting the worker must keep the process alive; close() always ends it.
    this.worker.on('message', (hits: LineHit[]) => {
      const p = this.pending;
      this.pending = undefined;
      p?.resolve(hits);
    });
    this.worker.on('error', (err) => this.fail(err));
    this.worker.on('exit', () => this.fail(new Error('the regex worker exited')));
    const timer = setTimeout(
      () => this.fail(new TroupeError('tool_timeout', `grep stopped after ${timeoutMs} ms: the pattern is too slow (a regex with nested repetition such as (a+)+ can backtrack for ever); simplify it or narrow the path or glob.`)),
      timeoutMs,
    );
    timer.unref();
    this.worker.once('exit', () => clearTimeout(timer));
    this.onAbort = () => this.fail(new TroupeError('request_cancelled', 'Cancelled before it finished.'));
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  private readonly onAbort: () => void;

  private fail(err: Error): void {
    this.failure ??= err;
    const p = this.pending;
    this.pending = undefined;
    p?.reject(this.failure);
    void this.worker.terminate();
  }

  /** The first `maxHits` matching lines of `texts`, in order; rejects on timeout or abort. */
  match(texts: string[], maxHits: number, maxChars: number): Promise<LineHit[]> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.worker.postMessage({ texts, maxHits, maxChars });
    });
  }

  close(): void {
    this.signal.removeEventListener('abort', this.onAbort);
    this.failure ??= new Error('closed');
    void this.worker.terminate();
  }
}
