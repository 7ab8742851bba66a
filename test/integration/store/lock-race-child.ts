// Child process of lock-race.test.ts: takes the lock `rounds` times, appending "enter <pid>" and
// "leave <pid>" to a shared file around each hold. After each release it leaves, if it can, a lock
// naming a dead process at the lock's path, as a holder killed with -9 would: every round then
// starts with a stale lock that all the contenders find and break at once.
import { appendFileSync } from 'node:fs';
import { createExclusive } from '../../../src/store/exclusive-create.js';
import { withFileLock } from '../../../src/store/file-lock.js';
import { takeProcessLock } from '../../../src/store/process-lock.js';

const [kind, lockPath, journal, deadLine, roundsText] = process.argv.slice(2) as [string, string, string, string, string];
const rounds = Number(roundsText);

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the holder does: long enough (a turn of the event loop and more) for a second holder to show. */
async function hold(): Promise<void> {
  appendFileSync(journal, `enter ${process.pid}\n`);
  await pause(2);
  appendFileSync(journal, `leave ${process.pid}\n`);
}

function leaveStaleLock(): void {
  try {
    createExclusive(lockPath, deadLine);
  } catch {
    // Someone holds it already: the next round starts from their lock.
  }
}

async function main(): Promise<void> {
  // Never outlive a parent that failed to kill us.
  setTimeout(() => process.exit(3), 60_000).unref();
  for (let done = 0, tries = 0; done < rounds && tries < 10_000; tries++) {
    if (kind === 'file') {
      await withFileLock(lockPath, hold, { timeoutMs: 30_000 });
    } else {
      let release: () => void;
      try {
        release = takeProcessLock(lockPath, () => new Error('refused'));
      } catch {
        // Refused: another holds it. Not a spin: the machine runs other tests too.
        await pause(3);
        continue;
      }
      await hold();
      release();
    }
    done++;
    leaveStaleLock();
  }
  process.stdout.write('done\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
