// Loaded into a CLI process with NODE_OPTIONS=--import: the moment the command writes a line
// containing TROUPE_INTERRUPT_ON to stderr, the process sends itself SIGINT, as a person pressing
// Ctrl-C just after reading that line would. A command that says "Ctrl-C detaches" must already be
// listening for it then (without a listener, SIGINT kills a Node process).
const marker = process.env.TROUPE_INTERRUPT_ON;
if (marker) {
  const write = process.stderr.write.bind(process.stderr) as (chunk: unknown, ...rest: unknown[]) => boolean;
  let sent = false;
  process.stderr.write = ((chunk: unknown, ...rest: unknown[]) => {
    const written = write(chunk, ...rest);
    if (!sent && String(chunk).includes(marker)) {
      sent = true;
      process.kill(process.pid, 'SIGINT');
    }
    return written;
  }) as typeof process.stderr.write;
}
