// The permission table: every mode × access, remembered answers, and plan mode's precedence.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { modePermissionPolicy, SESSION_MODES, isSessionModeId, DEFAULT_MODE_ID } from '../../../src/tools/index.js';
import type { PermissionDecision, ToolDescription } from '../../../src/core/ports.js';

type Access = ToolDescription['access'];
const toolFor: Record<Access, string> = { read: 'read_file', edit: 'edit_file', execute: 'run_command' };

function decide(mode: string, access: Access, remembered: Array<[string, 'allow' | 'reject']> = []): PermissionDecision {
  const name = toolFor[access];
  const description: ToolDescription = { kind: access === 'execute' ? 'execute' : access, title: `${name} title`, locations: [], access };
  return modePermissionPolicy.decide({ id: 'c1', name, input: {} }, description, mode, new Map(remembered));
}

const allow = { kind: 'allow', by: 'policy' } as const;
const ask = { kind: 'ask' } as const;

describe('mode table without remembered answers', () => {
  const table: Record<string, Record<Access, 'allow' | 'ask' | 'deny'>> = {
    default: { read: 'allow', edit: 'ask', execute: 'ask' },
    'accept-edits': { read: 'allow', edit: 'allow', execute: 'ask' },
    plan: { read: 'allow', edit: 'deny', execute: 'deny' },
    bypass: { read: 'allow', edit: 'allow', execute: 'allow' },
  };
  for (const [mode, row] of Object.entries(table)) {
    for (const [access, expected] of Object.entries(row) as Array<[Access, 'allow' | 'ask' | 'deny']>) {
      test(`${mode} × ${access} → ${expected}`, () => {
        const d = decide(mode, access);
        if (expected === 'allow') assert.deepEqual(d, allow);
        else if (expected === 'ask') assert.deepEqual(d, ask);
        else {
          assert.equal(d.kind, 'deny');
          assert.equal(d.kind === 'deny' && d.by, 'policy');
          assert.match(d.kind === 'deny' ? d.reason : '', /Plan mode is read-only/);
          assert.match(d.kind === 'deny' ? d.reason : '', new RegExp(toolFor[access]));
        }
      });
    }
  }

  test('the table covers exactly the exported modes', () => {
    assert.deepEqual(SESSION_MODES.map((m) => m.id).sort(), Object.keys(table).sort());
  });

  test('an unknown mode is treated cautiously (asks)', () => {
    assert.deepEqual(decide('yolo', 'edit'), ask);
    assert.deepEqual(decide('yolo', 'execute'), ask);
    assert.deepEqual(decide('yolo', 'read'), allow);
  });
});

describe('remembered answers', () => {
  for (const mode of ['default', 'accept-edits', 'bypass']) {
    for (const access of ['edit', 'execute'] as const) {
      test(`${mode} × ${access}: remembered allow allows, remembered reject denies`, () => {
        assert.deepEqual(decide(mode, access, [[toolFor[access], 'allow']]), { kind: 'allow', by: 'remembered' });
        const denied = decide(mode, access, [[toolFor[access], 'reject']]);
        assert.equal(denied.kind, 'deny');
        assert.equal(denied.kind === 'deny' && denied.by, 'remembered');
        assert.match(denied.kind === 'deny' ? denied.reason : '', new RegExp(`always reject ${toolFor[access]}`));
      });
    }
  }

  test('plan mode refuses even over a remembered allow', () => {
    for (const access of ['edit', 'execute'] as const) {
      const d = decide('plan', access, [[toolFor[access], 'allow']]);
      assert.equal(d.kind, 'deny');
      assert.equal(d.kind === 'deny' && d.by, 'policy');
    }
  });

  test('an answer remembered for another tool does not apply', () => {
    assert.deepEqual(decide('default', 'edit', [['write_file', 'allow']]), ask);
  });

  test('read access never asks, even with a remembered reject', () => {
    for (const mode of SESSION_MODES.map((m) => m.id)) assert.deepEqual(decide(mode, 'read', [['read_file', 'reject']]), allow);
  });
});

describe('modes list', () => {
  test('ids, names and descriptions for ACP session modes', () => {
    for (const mode of SESSION_MODES) {
      assert.match(mode.id, /^[a-z-]+$/);
      assert.ok(mode.name.length > 0 && mode.description.length > 10);
      assert.ok(isSessionModeId(mode.id));
    }
    assert.equal(isSessionModeId('nope'), false);
    assert.equal(DEFAULT_MODE_ID, 'default');
  });
});
