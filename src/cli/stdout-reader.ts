/**
 * Tells when the reader of a piped stdout goes away (`troupe watch ID | head -3`, then `head` exits)
 * without writing anything to it. A command that follows something (watch, attach, daemon logs -f)
 * may print nothing for hours once its session is idle, and a closed pipe is otherwise only noticed
 * at the next write (EPIPE): until 2026-12-07 such a command ran on forever after its reader left.
 *
 * How: on Linux the write end of a pipe polls POLLERR once no reader is left (coreutils `tail -f`
 * watches stdout that way since 8.28). Node does not poll an fd for that: libuv only polls stdout
 * while a write waits, and refuses to read-poll a write-only pipe (uv_read_start: ENOTCONN), which is
 * all `net.Socket` and `tty.ReadStream` offer. So a second descriptor of the same pipe is opened for
 * writing (/proc/self/fd/1: a writer, so it keeps nothing open for a reader) and handed to a libuv
 * TCP stream handle, whose open takes any fd as readable. Reading it never yields data (a write-only
 * descriptor is never readable); when the last reader closes, epoll reports EPOLLERR, libuv's read
 * fails (EBADF) and its callback runs: the signal. No timer, no bytes written, and the handle is
 * unref'd, so it keeps no command alive.
 *
 * Elsewhere (not Linux, stdout not a pipe, a Node without `process.binding('tcp_wrap')`) it does
 * nothing, and a closed pipe is noticed at the next write, as before.
 */
import { closeSync, constants, fstatSync, openSync } from 'node:fs';

interface StreamHandle {
  open(fd: number): number;
  readStart(): number;
  readStop(): number;
  close(): void;
  unref(): void;
  onread: (() => void) | undefined;
}

/**
 * Calls `gone` once the last reader of `stdout` (a pipe or FIFO: process.stdout only) has closed it;
 * returns a function that stops watching.
 */
export function onStdoutReaderGone(stdout: NodeJS.WritableStream, gone: () => void): () => void {
  const nothing = () => undefined;
  if (stdout !== process.stdout || process.platform !== 'linux') return nothing;
  let fd: number;
  try {
    if (!fstatSync(1).isFIFO()) return nothing;
    // Non-blocking: a named FIFO (`troupe watch ID > fifo`) whose reader has gone refuses it (ENXIO)
    // instead of waiting for a new one.
    fd = openSync('/proc/self/fd/1', constants.O_WRONLY | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENXIO') queueMicrotask(gone);
    return nothing;
  }
  const handle = tcpHandle();
  if (!handle || handle.open(fd) !== 0) {
    closeSync(fd);
    return nothing;
  }
  let watching = true;
  const stop = () => {
    if (!watching) return;
    watching = false;
    handle.readStop();
    handle.close(); // closes fd too
  };
  handle.onread = () => {
    stop();
    gone();
  };
  if (handle.readStart() !== 0) {
    stop();
    return nothing;
  }
  handle.unref();
  return stop;
}

/** A fresh libuv TCP stream handle, or undefined where Node does not offer one. */
function tcpHandle(): StreamHandle | undefined {
  // process.binding is deprecated only as pending (DEP0111): a warning with --pending-deprecation,
  // which this use is no reason to print.
  const quiet = process.noDeprecation;
  process.noDeprecation = true;
  try {
    const wrap = (process as unknown as { binding(name: string): { TCP: new (type: number) => StreamHandle; constants: { SOCKET: number } } }).binding('tcp_wrap');
    return new wrap.TCP(wrap.constants.SOCKET);
  } catch {
    return undefined;
  } finally {
    process.noDeprecation = quiet;
  }
}
