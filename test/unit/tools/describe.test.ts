// The tool host's static surface: specs, validation, kinds, access, titles and locations.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createWorkspaceTools } from '../../../src/tools/index.js';
import type { ToolCallRequest } from '../../../src/core/ports.js';

const cwd = '/work/project';
const host = createWorkspaceTools({ cwd, additionalDirectories: ['/work/shared'] });
const req = (name: string, input: Record<string, unknown>): ToolCallRequest => ({ id: 'c1', name, input });

describe('specs', () => {
  test('the eight tools, each with a closed object schema and a description', () => {
    const specs = host.specs();
    assert.deepEqual(specs.map((s) => s.name), ['read_file', 'write_file', 'edit_file', 'list_dir', 'glob', 'grep', 'run_command', 'update_plan']);
    for (const spec of specs) {
      const schema = spec.inputSchema as { type: string; properties: Record<string, { type: string; description: string }>; required: string[]; additionalProperties: boolean };
      assert.equal(schema.type, 'object');
      assert.equal(schema.additionalProperties, false);
      for (const r of schema.required) assert.ok(schema.properties[r], `${spec.name}.${r} required but not declared`);
      for (const [name, prop] of Object.entries(schema.properties)) {
        assert.ok(['string', 'integer', 'boolean', 'array'].includes(prop.type), `${spec.name}.${name}`);
        assert.ok(prop.description.length > 5, `${spec.name}.${name} lacks a description`);
      }
      assert.ok(spec.description.length > 50);
    }
  });
});

describe('describe', () => {
  const cases: Array<[string, Record<string, unknown>, { kind: string; access: string; title: string; locations: unknown[] }]> = [
    ['read_file', { path: 'src/a.ts' }, { kind: 'read', access: 'read', title: 'Read src/a.ts', locations: [{ path: '/work/project/src/a.ts' }] }],
    ['read_file', { path: 'src/a.ts', offset: 40 }, { kind: 'read', access: 'read', title: 'Read src/a.ts (from line 40)', locations: [{ path: '/work/project/src/a.ts', line: 40 }] }],
    ['write_file', { path: '/work/shared/n.md', content: '' }, { kind: 'edit', access: 'edit', title: 'Write /work/shared/n.md', locations: [{ path: '/work/shared/n.md' }] }],
    ['edit_file', { path: './b.ts', old_string: 'a', new_string: 'b' }, { kind: 'edit', access: 'edit', title: 'Edit b.ts', locations: [{ path: '/work/project/b.ts' }] }],
    ['list_dir', {}, { kind: 'read', access: 'read', title: 'List .', locations: [{ path: '/work/project' }] }],
    ['glob', { pattern: '**/*.ts', path: 'src' }, { kind: 'search', access: 'read', title: 'Find `**/*.ts` in src', locations: [{ path: '/work/project/src' }] }],
    ['grep', { pattern: 'TODO' }, { kind: 'search', access: 'read', title: 'Search `TODO`', locations: [{ path: '/work/project' }] }],
    ['run_command', { command: 'npm test' }, { kind: 'execute', access: 'execute', title: 'Run `npm test`', locations: [] }],
    ['run_command', { command: 'make\nmake install', cwd: 'pkg' }, { kind: 'execute', access: 'execute', title: 'Run `make…` in pkg', locations: [{ path: '/work/project/pkg' }] }],
    // A title is one line of printable text (as a session's): ESC, CR, tab, C1 and bidi overrides are
    // spaces, runs of them one; until 2026-12-07 they reached the editor raw.
    ['run_command', { command: 'echo \x1b[2J\rok\there\u009b1m \u202Etxt.exe\u202C' }, { kind: 'execute', access: 'execute', title: 'Run `echo [2J ok here 1m txt.exe`', locations: [] }],
    ['grep', { pattern: '\u2066a\u2069\x00b\nsecond' }, { kind: 'search', access: 'read', title: 'Search `a b…`', locations: [{ path: '/work/project' }] }],
    // Cut at 80 units (a command's), never inside an emoji: its two units go together.
    ['run_command', { command: `${'a'.repeat(79)}😀 and more` }, { kind: 'execute', access: 'execute', title: `Run \`${'a'.repeat(79)}…\``, locations: [] }],
    [
      'update_plan',
      { entries: [{ content: 'a', priority: 'high', status: 'completed' }, { content: 'b', priority: 'low', status: 'pending' }] },
      { kind: 'think', access: 'read', title: 'Plan: 1/2 done', locations: [] },
    ],
  ];
  for (const [name, input, expected] of cases) {
    test(`${name} ${JSON.stringify(input)}`, () => {
      assert.deepEqual(host.describe(req(name, input)), expected);
    });
  }

  test('unknown tools throw unknown_tool; run returns it as a failure', async () => {
    assert.throws(() => host.describe(req('delete_everything', {})), { name: 'TroupeError', code: 'unknown_tool' });
    const r = await host.run(req('delete_everything', {}), { signal: new AbortController().signal, update() {} });
    assert.deepEqual([r.isError, r.errorCode], [true, 'unknown_tool']);
    assert.match(r.output, /Available: read_file/);
  });

  const invalid: Array<[string, unknown, RegExp]> = [
    ['read_file', {}, /"path" is required/],
    ['read_file', { path: 3 }, /"path" must be a string/],
    ['read_file', { path: '' }, /at least 1/],
    ['read_file', { path: 'a', offset: 0 }, /"offset" must be at least 1/],
    ['read_file', { path: 'a', limit: 1.5 }, /"limit" must be an integer/],
    ['read_file', { path: 'a', extra: true }, /unknown property "extra"/],
    ['read_file', null, /must be a JSON object/],
    // Names of Object.prototype's members are unknown properties too, not members of the schema.
    ['read_file', { path: 'a', constructor: 1 }, /unknown property "constructor"/],
    ['run_command', { command: 'x', toString: 'y' }, /unknown property "toString"/],
    ['read_file', JSON.parse('{"path":"a","__proto__":{"x":1}}'), /unknown property "__proto__"/],
    ['update_plan', { entries: [{ content: 'a', priority: 'high', status: 'pending', hasOwnProperty: 1 }] }, /unknown property "entries\[0\]\.hasOwnProperty"/],
    ['edit_file', { path: 'a', old_string: 'x', new_string: 'y', replace_all: 'yes' }, /"replace_all" must be true or false/],
    ['edit_file', { path: 'a', old_string: '', new_string: 'y' }, /"old_string" must have at least 1/],
    ['write_file', { path: 'a' }, /"content" is required/],
    ['run_command', { command: 'x', timeout_ms: 10_000_000 }, /"timeout_ms" must be at most 600000/],
  ];
  for (const [name, input, message] of invalid) {
    test(`invalid ${name} ${JSON.stringify(input)} → invalid_params`, () => {
      assert.throws(() => host.describe(req(name, input as Record<string, unknown>)), (err: { code?: string; message?: string }) => {
        assert.equal(err.code, 'invalid_params');
        assert.match(err.message ?? '', message);
        return true;
      });
    });
  }

  test('a relative cwd or additional directory is refused', () => {
    assert.throws(() => createWorkspaceTools({ cwd: 'relative' }), { code: 'invalid_params' });
    assert.throws(() => createWorkspaceTools({ cwd, additionalDirectories: ['rel'] }), { code: 'invalid_params' });
  });
});
