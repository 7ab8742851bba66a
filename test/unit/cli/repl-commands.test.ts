// troupe chat's commands: /help lists the agent's after the chat's own, and Tab completes both
// (the agent's include its MCP servers' prompts, as announced by available_commands_update).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { completeCommand, helpText } from '../../../src/cli/repl.js';

const agent = [
  { name: 'compact', description: 'Summarize older turns now to free context.' },
  { name: 'mode', description: 'Switch the session mode.', input: { hint: 'mode id' } },
  { name: 'mcp__docs__review', description: 'Reviews a file.', input: { hint: 'path' } },
  { name: 'mcp__docs__recap', description: 'Recaps.' },
];

test("/help: the chat's commands, then the agent's it does not handle itself, with their input", () => {
  const help = helpText(agent);
  assert.match(help, /^\/cancel /);
  assert.match(help, /The agent's commands \(sent as the prompt\):\n\/compact +Summarize older turns now to free context\.\n\/mcp__docs__review path Reviews a file\.\n\/mcp__docs__recap +Recaps\.$/);
  assert.doesNotMatch(help.slice(help.indexOf("The agent's")), /\/mode/);
  assert.equal(helpText([]).includes("The agent's"), false);
});

test('Tab completes a command being typed, and nothing else', () => {
  assert.deepEqual(completeCommand('/mcp', agent), [['/mcp__docs__recap', '/mcp__docs__review'], '/mcp']);
  assert.deepEqual(completeCommand('/mo', agent), [['/mode', '/model'], '/mo']);
  assert.deepEqual(completeCommand('/', agent).length, 2);
  assert.equal(completeCommand('/', agent)[0].length, 9);
  assert.deepEqual(completeCommand('/mcp__docs__review src', agent), [[], '/mcp__docs__review src']);
  assert.deepEqual(completeCommand('hello /mo', agent), [[], 'hello /mo']);
});

test("Tab completion spells out the control characters of the agent's command names, as /help does", () => {
  const hostile = [{ name: 'evil\x1b]0;owned\x07', description: 'x' }, { name: 'mcp__s__p\x9b2J', description: 'y' }];
  const [candidates] = completeCommand('/', hostile);
  // Until 2026-12-06 readline printed these raw (or wrote the one match into the line).
  assert.ok(candidates.includes('/evil\\x1b]0;owned\\x07'), JSON.stringify(candidates));
  assert.ok(candidates.includes('/mcp__s__p\\x9b2J'), JSON.stringify(candidates));
  assert.ok(candidates.every((c) => !/[\x00-\x1f\x7f-\x9f]/.test(c)), JSON.stringify(candidates));
  assert.deepEqual(completeCommand('/ev', hostile), [['/evil\\x1b]0;owned\\x07'], '/ev']);
});
