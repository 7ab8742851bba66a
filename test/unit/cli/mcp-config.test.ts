// `--mcp-config FILE` of run and chat: a file that cannot be used is a usage error (exit 2) whose
// line says why, in one line (an error is printed up to its first line break, docs/cli.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliError } from '../../../src/cli/cli-io.js';
import { readMcpConfig } from '../../../src/cli/mcp-config.js';

function refusal(path: string): CliError {
  try {
    readMcpConfig(path);
  } catch (err) {
    assert.ok(err instanceof CliError, String(err));
    return err;
  }
  assert.fail('the file was taken');
}

test('a file that is not JSON says so on one line, with where V8 stopped spelled out', () => {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-mcp-config-'));
  try {
    const path = join(dir, 'mcp.json');
    writeFileSync(path, 'vm\n');
    const err = refusal(path);
    assert.equal(err.code, 'usage');
    // Until 2026-12-07: `cannot read the MCP config …: Unexpected token 'v', "vm` and there the line ended.
    assert.ok(!err.message.includes('\n'), JSON.stringify(err.message));
    assert.equal(err.message, `the MCP config ${path} is not JSON: Unexpected token 'v', "vm\\x0a" is not valid JSON`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a file that cannot be read gives its reason and errno, not Node\'s words', () => {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-mcp-config-'));
  try {
    const missing = join(dir, 'nope.json');
    // Until 2026-12-07: `…: ENOENT: no such file or directory, open '…/nope.json'`.
    assert.equal(refusal(missing).message, `cannot read the MCP config ${missing}: no such file or directory (ENOENT)`);
    assert.equal(refusal(dir).message, `cannot read the MCP config ${dir}: illegal operation on a directory (EISDIR)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
