// `troupe sessions` lines its columns up by what the terminal shows: titles in CJK, with emoji or
// with combining marks keep the columns after them in place.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { displayWidth } from '../../../src/cli/display-width.js';
import { sessionsCommand } from '../../../src/cli/sessions.command.js';
import { fakeManagementApi, type FakeApi } from '../../support/cli/fake-management-api.js';

const session = (id: string, title: string, cwd: string) => ({
  id,
  cwd,
  title,
  model: 'scripted/demo',
  mode: 'default',
  createdAt: Date.now(),
  updatedAt: Date.now(),
  status: 'active',
  lastSeq: 3,
  child: null,
  connections: 0,
  live: false,
});

let api: FakeApi;
before(async () => {
  api = await fakeManagementApi({
    'GET /v1/sessions': {
      sessions: [
        session('ses_0a', 'plain ascii title', '/w/a'),
        session('ses_0b', '漢字のタイトル', '/w/b'),
        session('ses_0c', '😀 emoji 👨‍👩‍👧 and 🇫🇷', '/w/c'),
        session('ses_0d', 'cafe\u0301 re\u0301sume\u0301', '/w/d'),
        session('ses_0e', '', '/w/e'),
      ],
    },
  });
});
after(() => api.close());

test('the list lines up every column by display width, whatever the titles are made of', async () => {
  const r = await api.run(sessionsCommand, []);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  assert.equal(lines.length, 6);
  // The CWD column starts at the same terminal column on every line (until 2026-12-06 the CJK row's
  // started 7 columns right of the header's, the emoji and combining rows' left of it).
  const cwdColumn = (line: string) => displayWidth(line.slice(0, line.search(/CWD|\/w\//)));
  const columns = lines.map(cwdColumn);
  assert.deepEqual(new Set(columns).size, 1, `CWD at columns ${columns.join(', ')}:\n${r.stdout}`);
  // And so does the TITLE column.
  const titleColumn = (line: string) => displayWidth(line.slice(0, line.search(/TITLE|plain|漢|😀|cafe/)));
  const titles = lines.filter((l) => !l.startsWith('ses_0e')).map(titleColumn);
  assert.equal(new Set(titles).size, 1, `TITLE at columns ${titles.join(', ')}`);
});
