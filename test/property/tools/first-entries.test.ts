// firstEntries keeps what sorting a directory's every entry and taking the first `max` gives, in
// the same order (of equal ones, those read first, as a stable sort keeps them), for random names
// (bytes that are not UTF-8 included, whose U+FFFD readings tie) in a real directory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { opendir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { firstEntries } from '../../../src/tools/first-entries.js';
import { fcRuns, fcSeed } from '../../support/fc-seed.js';

// Names from a few bytes: short names collide often, and 0xe9, 0xff read as U+FFFD alike. A small
// `max` (under half the names) is where the entries gathered are cut while the directory is read.
const nameBytes = fc.array(fc.constantFrom(0x61, 0x62, 0x7a, 0xc3, 0xa9, 0xe9, 0xff), { minLength: 1, maxLength: 4 });

const byBytes = (a: Buffer, b: Buffer) => Buffer.compare(a, b);
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

test('firstEntries is sort-then-slice of every entry, in bytes and in text order', async () => {
  const seed = fcSeed('first-entries');
  await fc.assert(
    fc.asyncProperty(fc.uniqueArray(nameBytes, { maxLength: 40, selector: (b) => Buffer.from(b).toString('hex') }), fc.oneof(fc.nat({ max: 8 }), fc.nat({ max: 45 })), async (names, max) => {
      const dir = mkdtempSync(join(tmpdir(), 'troupe-first-entries-'));
      try {
        for (const name of names) writeFileSync(Buffer.concat([Buffer.from(`${dir}/`), Buffer.from(name)]), '');
        // In the order the system reads them, which decides between equal ones.
        const all: Buffer[] = [];
        for await (const entry of await opendir(dir, { encoding: 'buffer' as BufferEncoding })) all.push(entry.name as unknown as Buffer);
        const bytes = await firstEntries(dir, max, (e) => e.name, byBytes);
        assert.deepEqual(bytes, { kept: [...all].sort(byBytes).slice(0, max), total: names.length });
        // Kept with their bytes, so that the order of names whose texts tie shows.
        const text = await firstEntries(dir, max, (e) => ({ text: e.name.toString('utf8'), raw: e.name }), (a, b) => byText(a.text, b.text));
        const sorted = all.map((raw) => ({ text: raw.toString('utf8'), raw })).sort((a, b) => byText(a.text, b.text));
        assert.deepEqual(text, { kept: sorted.slice(0, max), total: names.length });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }),
    { seed, numRuns: fcRuns(50) },
  );
});
