// A session's child killed (kill -9) with real processes: only its own prompt fails, it comes back
// with its history, and its clients are sent, after the restart, what the dead process had logged
// but not written out, each update once and in order; the commands it ran are stopped too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { childPidsOf, Daemon, daemonWithClients, processAlive, tempDir, waitFor, daemonWithClient } from '../../support/daemon.js';
import { FileEventLog, sessionLogPath, sessionsDir } from '../../../src/store/index.js';
import { childOf, script } from './supervision.fixture.js';

const MCP_SERVER = resolve('dist/test/support/mcp-test-server.js');

test('kill -9 of one child mid-turn: agent_crashed for that prompt only; it comes back with its history', async (t) => {
  const { d, a, b } = await daemonWithClients(t, { script });
  const cwd = tempDir();
  const sa = (await a.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  const sb = (await b.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  const victim = a.agent.request('session/prompt', { sessionId: sa, prompt: [{ type: 'text', text: 'long' }] });
  const bystander = b.agent.request('session/prompt', { sessionId: sb, prompt: [{ type: 'text', text: 'steady' }] });
  await a.until(() => a.updatesFor(sa, 'agent_message_chunk').length >= 3, 'victim streaming');
  // The history checked below is what was durable when the child died.
  await d.untilDurable(sa, a.updatesFor(sa, 'agent_message_chunk').at(-1)._meta.troupe.seq);
  const { pid } = await childOf(d, sa);
  process.kill(pid, 'SIGKILL');
  await assert.rejects(victim, (e: any) => e.data?.code === 'agent_crashed' && e.data?.sessionId === sa);
  const done = await bystander;
  assert.equal(done.stopReason, 'end_turn', 'the other session never noticed');
  const text = b.updatesFor(sb, 'agent_message_chunk').map((u) => u.content.text).join('');
  assert.equal(text, Array.from({ length: 30 }, (_, i) => `b${i} `).join(''), 'no missing update in the other session');
  const seqs = b.seqs(sb);
  assert.ok(seqs.every((s, i) => i === 0 || s > seqs[i - 1]!), 'its updates stayed in order');
  // The victim's session is back, in a new process, with its history.
  const next = await a.agent.request('session/prompt', { sessionId: sa, prompt: [{ type: 'text', text: 'ping' }] });
  assert.equal(next.stopReason, 'end_turn');
  const child = await childOf(d, sa);
  assert.notEqual(child.pid, pid);
  assert.equal(child.restarts, 1);
  const reader = d.connect('http');
  t.after(() => reader.close());
  await reader.init();
  await reader.agent.request('session/load', { sessionId: sa, cwd, mcpServers: [] });
  const replay = reader.updatesFor(sa);
  assert.ok(replay.some((u) => u.sessionUpdate === 'user_message_chunk' && u.content.text === 'long'), 'the interrupted prompt is in the history');
  assert.ok(replay.some((u) => u.sessionUpdate === 'agent_thought_chunk' && /agent_crashed/.test(u.content.text)), 'and shown as ended agent_crashed');
  assert.ok(replay.some((u) => u.sessionUpdate === 'agent_message_chunk' && u.content.text === 'pong'));
  const exits = (await (await fetch(`${d.url}/metrics`, { headers: d.headers })).text()).match(/troupe_child_restarts_total (\d+)/);
  assert.equal(exits?.[1], '1');
});

test('kill -9 of a child while its command runs: the command\'s processes (its group, and one that left it) are stopped too, not left running beside the restarted session', async (t) => {
  // A command runs in a process group of its own, which its agent's death does not reach: the
  // daemon's spawner finds what the dead child started by the marker in their environment.
  const command = `sleep 1000 & echo $! > group.pid; setsid sleep 1001 >/dev/null 2>&1 & echo $! > setsid.pid; wait`;
  const { d, c } = await daemonWithClient(t, 'ws', { script: { replies: [{ when: 'run', items: [{ tool_call: { name: 'run_command', input: { command } } }] }, ...script.replies] } });
  const cwd = tempDir();
  const sessionId = (await c.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  const running = c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'run' }] }).catch((e: any) => e?.data?.code);
  const pids = await waitFor('the command\'s processes', () => {
    const read = (name: string) => (existsSync(join(cwd, name)) ? Number(readFileSync(join(cwd, name), 'utf8').trim()) : 0);
    const both = [read('group.pid'), read('setsid.pid')];
    return both.every((pid) => pid > 0 && processAlive(pid)) && both;
  });
  t.after(() => pids.forEach((pid) => processAlive(pid) && process.kill(pid, 'SIGKILL')));
  process.kill((await childOf(d, sessionId)).pid, 'SIGKILL');
  assert.equal(await running, 'agent_crashed');
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] })).stopReason, 'end_turn', 'the session goes on in a new process');
  await waitFor('the dead child\'s command stopped', () => pids.every((pid) => !processAlive(pid)));
  assert.match(d.stderr, /a session process died with commands still running; stopping them .*"processes":[2-9]/);
});

test('a session/load sent while the crashed child restarts gets the history once: the new child\'s catch-up is not also sent to it live', async (t) => {
  const { d, a } = await daemonWithClients(t, { script });
  const cwd = tempDir();
  const sa = (await a.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  const victim = a.agent.request('session/prompt', { sessionId: sa, prompt: [{ type: 'text', text: 'long' }] });
  await a.until(() => a.updatesFor(sa, 'agent_message_chunk').length >= 3, 'streaming');
  process.kill((await childOf(d, sa)).pid, 'SIGKILL');
  await assert.rejects(victim, (e: any) => e.data?.code === 'agent_crashed');
  // At once, in the restart's backoff: the load waits for the new process, whose resume sends the
  // clients what the log holds beyond what they saw (the crashed turn's end among it).
  const from = a.updatesFor(sa).length;
  await a.agent.request('session/load', { sessionId: sa, cwd, mcpServers: [] });
  const got = a.updatesFor(sa).slice(from);
  const ends = got.filter((u) => u.sessionUpdate === 'agent_thought_chunk' && /agent_crashed/.test(u.content.text));
  assert.equal(ends.length, 1, "the crashed turn's end, once");
  // What it was sent from its load on is exactly the replay another client's load gets.
  const reader = d.connect('http');
  t.after(() => reader.close());
  await reader.init();
  await reader.agent.request('session/load', { sessionId: sa, cwd, mcpServers: [] });
  const shown = (updates: any[]) => updates.filter((u) => u._meta?.troupe?.seq !== undefined).map((u) => [u.sessionUpdate, u._meta.troupe.seq]);
  assert.deepEqual(shown(got), shown(reader.updatesFor(sa)));
});

test('kill -9 of a child at any moment of a stream: its client is sent the whole history, the crashed turn\'s end and the next turn included, each seq once and in order', async (t) => {
  // What a child sent is in its log's file before it leaves the child (spec/event-log.md §3), so its
  // replacement never gives a seq the client saw to another event. Before, the last few milliseconds
  // of a stream could be lost with the child, the next events took their seqs, and the relay, which
  // sends each connection a seq once, dropped them as already sent: the next turn went unseen.
  // It ends in a hang, so that the kill always comes before the turn's end: on a loaded machine the
  // client, reading behind, could see its count of chunks only once the child had ended the turn, and
  // the kill then found nothing to cut (the prompt answered end_turn; seen in a full run on 2026-12-07).
  const fast = [...Array.from({ length: 6000 }, (_, i) => (i % 20 === 19 ? { delay_ms: 2 } : { text: `w${i} ` })), { hang: true }];
  const { d, a } = await daemonWithClients(t, { script: { replies: [{ when: 'fast', items: fast }, { when: 'ping', items: [{ text: 'pong' }] }] } });
  for (let round = 0; round < 4; round++) {
    const cwd = tempDir();
    const sessionId = (await a.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
    const victim = a.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'fast' }] }).catch((e: any) => e?.data?.code);
    await a.until(() => a.updatesFor(sessionId, 'agent_message_chunk').length >= 40 + 97 * round, 'the stream under way', 30_000);
    process.kill((await childOf(d, sessionId)).pid, 'SIGKILL');
    assert.equal(await victim, 'agent_crashed', `round ${round}`);
    assert.equal((await a.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] })).stopReason, 'end_turn');
    await a.until(() => a.updatesFor(sessionId, 'agent_message_chunk').some((u) => u.content.text === 'pong'), `round ${round}: the next turn's reply, live`, 5_000);
    const seqs = a.seqs(sessionId);
    assert.ok(seqs.every((s, i) => i === 0 || s > seqs[i - 1]!), `round ${round}: each seq once, in order`);
    // The client was sent the whole history, the end of the interrupted turn too (the new child's
    // open appended it), each update as a load replays it.
    const reader = d.connect('http');
    await reader.init();
    await reader.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
    const live = new Set(a.updatesFor(sessionId).map((u) => JSON.stringify(u)));
    const unseen = reader.updatesFor(sessionId).filter((u: any) => u._meta?.troupe?.seq !== undefined && !live.has(JSON.stringify(u)));
    reader.close();
    // All but the client's own two prompts, which it is not sent back.
    const prompts = unseen.filter((u: any) => u.sessionUpdate === 'user_message_chunk');
    assert.deepEqual(prompts.map((u: any) => u.content.text), ['fast', 'ping'], `round ${round}`);
    assert.deepEqual(unseen.filter((u: any) => !prompts.includes(u)), [], `round ${round}: replayed, never sent live (live seqs ${JSON.stringify(seqs.slice(-6))})`);
    assert.ok(a.updatesFor(sessionId, 'agent_thought_chunk').some((u) => /agent_crashed/.test(u.content.text)), `round ${round}: the crashed turn's end, live`);
  }
});

test('kill -9 of a child whose turn had ended in its log, the rest of it still in its stdout buffer: its client is sent the rest after the restart', async (t) => {
  // The daemon stops reading (SIGSTOP): the child's stdout pipe fills, and what the turn makes after
  // that waits in the child's memory, each event in its log first. The turn ends there, so the new
  // child's open has nothing to repair; before 2026-12-02 its catch-up came only with a repair, and
  // the client never saw the end of the turn.
  const items = [{ text: 'start ' }, { delay_ms: 1500 }, ...Array.from({ length: 3000 }, (_, i) => ({ text: `c${i} ` }))];
  const { d, a } = await daemonWithClients(t, { script: { replies: [{ when: 'fill', items }] } });
  const cwd = tempDir();
  const sessionId = (await a.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  const victim = a.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'fill' }] }).catch((e: any) => e?.data?.code);
  await a.until(() => a.updatesFor(sessionId, 'agent_message_chunk').length >= 1, 'the first chunk');
  const { pid } = await childOf(d, sessionId);
  process.kill(d.proc.pid!, 'SIGSTOP');
  try {
    const logPath = sessionLogPath(sessionsDir(d.home), sessionId);
    await waitFor('the turn ended in the log', async () => {
      const log = await FileEventLog.open(logPath, { readOnly: true });
      try {
        return (await log.readAfter(Math.max(0, log.lastSeq() - 3))).events.some((e) => e.type === 'turn_completed');
      } finally {
        await log.close();
      }
    });
    process.kill(pid, 'SIGKILL');
  } finally {
    process.kill(d.proc.pid!, 'SIGCONT');
  }
  assert.equal(await victim, 'agent_crashed', 'its answer died with the process');
  const expected = ['start ', ...Array.from({ length: 3000 }, (_, i) => `c${i} `)];
  await a.until(() => a.updatesFor(sessionId, 'agent_message_chunk').length >= expected.length, 'the rest of the turn, after the restart', 30_000);
  assert.deepEqual(a.updatesFor(sessionId, 'agent_message_chunk').map((u) => u.content.text), expected, 'every chunk once, in order');
});

for (const revived of [false, true]) {
  test(`kill -9 of a child before the relay sent any update of its ${revived ? 'revived' : 'new'} session, its turn ended in the log and still in its stdout buffer: its client is sent the turn after the restart`, async (t) => {
    // The relay had sent nothing of the session, so it asked the new child for no catch-up (a session
    // it has sent nothing of is not sent its history), and the turn, in the log, never reached the
    // client. To get there: the prompt is an MCP server's command, which waits for that server to
    // start, behind resumes that wait for it too; the daemon stops reading (SIGSTOP), the server
    // starts, and the resumes' answers fill the child's stdout pipe ahead of the turn's updates,
    // which wait in the child's memory, each event in its log first.
    const script = { replies: [{ when: 'greet', items: [{ text: 'one ' }, { text: 'two ' }, { text: 'three' }] }, { when: 'ping', items: [{ text: 'pong' }] }] };
    const first = await Daemon.start({ script });
    const cwd = tempDir();
    let sessionId: string;
    let d = first;
    if (revived) {
      // Made and used by an earlier daemon on this home: this one has sent none of its updates.
      const c = first.connect('ws');
      await c.init();
      sessionId = (await c.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
      assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] })).stopReason, 'end_turn');
      c.close();
      await first.stop();
      d = await Daemon.start({ script, home: first.home });
    }
    t.after(() => d.stop());
    const b = d.connect('ws');
    t.after(() => b.close());
    await b.init();
    if (revived) await b.agent.request('session/resume', { sessionId: sessionId!, cwd, mcpServers: [] });
    else sessionId = (await b.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
    const gate = join(tempDir(), 'open');
    const mcpServers = [{ name: 'test', command: process.execPath, args: [MCP_SERVER], env: [{ name: 'MCP_TEST_START_GATE', value: gate }] }];
    const { pid } = await childOf(d, sessionId!);
    // Over one WebSocket, in this order; about 740 bytes of answer each, 150 are twice the pipe.
    const fillers = Array.from({ length: 150 }, () => b.agent.request('session/resume', { sessionId, cwd, mcpServers }).catch(() => undefined));
    const victim = b.agent.request('session/prompt', { sessionId: sessionId!, prompt: [{ type: 'text', text: '/mcp__test__greet Ada' }] }).catch((e: any) => e?.data?.code);
    await waitFor('the prompt in the child', async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.machines.child === 'busy');
    await waitFor('the MCP server started', () => childPidsOf(pid).length > 0);
    const logPath = sessionLogPath(sessionsDir(d.home), sessionId!);
    const lastSeq = async () => {
      const log = await FileEventLog.open(logPath, { readOnly: true });
      try {
        return { seq: log.lastSeq(), last: (await log.readAfter(Math.max(0, log.lastSeq() - 1))).events.at(-1) };
      } finally {
        await log.close();
      }
    };
    const before = (await lastSeq()).seq;
    process.kill(d.proc.pid!, 'SIGSTOP');
    try {
      writeFileSync(gate, '');
      await waitFor('the turn ended in the log', async () => {
        const { seq, last } = await lastSeq();
        return seq > before && last?.type === 'turn_completed';
      });
      process.kill(pid, 'SIGKILL');
    } finally {
      process.kill(d.proc.pid!, 'SIGCONT');
    }
    assert.equal(await victim, 'agent_crashed', 'its answer died with the process');
    await Promise.all(fillers);
    assert.deepEqual(b.seqs(sessionId!), [], 'the relay had sent no update of the session');
    // The next turn's answer comes after what the restarted child's resume sent.
    assert.equal((await b.agent.request('session/prompt', { sessionId: sessionId!, prompt: [{ type: 'text', text: 'ping' }] })).stopReason, 'end_turn');
    await b.until(() => b.updatesFor(sessionId!, 'agent_message_chunk').some((u) => u.content.text === 'pong'), 'the next turn, live');
    assert.deepEqual(b.updatesFor(sessionId!, 'agent_message_chunk').map((u) => u.content.text), ['one ', 'two ', 'three', 'pong'], 'the turn the crash cut off, then the next');
  });
}

test("kill -9 of a child whose prompt's echo was still in its stdout buffer: the restarted child's catch-up shows the prompt to the session's other clients, not to its sender", async (t) => {
  // As above: the prompt (an MCP command, waiting for its gated server) is in the log, its echo and
  // its turn in the child's memory behind the resumes' answers, when the child dies. The catch-up
  // brings them; until 2026-12-06 it was untagged, and the sender was sent its own prompt back, which
  // the live relay never does (the daemon could not tell it was that client's).
  const script = { replies: [{ when: 'greet', items: [{ text: 'one ' }, { text: 'two' }] }] };
  const { d, a: watcher, b: sender } = await daemonWithClients(t, { script });
  const cwd = tempDir();
  const sessionId = (await sender.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  await watcher.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  const gate = join(tempDir(), 'open');
  const mcpServers = [{ name: 'test', command: process.execPath, args: [MCP_SERVER], env: [{ name: 'MCP_TEST_START_GATE', value: gate }] }];
  const { pid } = await childOf(d, sessionId);
  // Over the sender's WebSocket, in this order: answers that fill the child's stdout pipe.
  const fillers = Array.from({ length: 150 }, () => sender.agent.request('session/resume', { sessionId, cwd, mcpServers }).catch(() => undefined));
  const victim = sender.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: '/mcp__test__greet Ada' }] }).catch((e: any) => e?.data?.code);
  await waitFor('the prompt in the child', async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.machines.child === 'busy');
  await waitFor('the MCP server started', () => childPidsOf(pid).length > 0);
  const logPath = sessionLogPath(sessionsDir(d.home), sessionId);
  const turnEnded = async () => {
    const log = await FileEventLog.open(logPath, { readOnly: true });
    try {
      return (await log.readAfter(Math.max(0, log.lastSeq() - 1))).events.at(-1)?.type === 'turn_completed';
    } finally {
      await log.close();
    }
  };
  process.kill(d.proc.pid!, 'SIGSTOP');
  try {
    writeFileSync(gate, '');
    await waitFor('the turn ended in the log', turnEnded);
    process.kill(pid, 'SIGKILL');
  } finally {
    process.kill(d.proc.pid!, 'SIGCONT');
  }
  assert.equal(await victim, 'agent_crashed', 'its answer died with the process');
  await Promise.all(fillers);
  for (const c of [watcher, sender]) await c.until(() => c.updatesFor(sessionId, 'agent_message_chunk').length >= 2, 'the turn, after the restart', 30_000);
  const prompts = (c: typeof watcher) => c.updatesFor(sessionId, 'user_message_chunk').map((u) => u.content.text);
  assert.deepEqual(prompts(watcher), ['Please greet Ada.'], 'the other client is sent the prompt');
  assert.deepEqual(prompts(sender), [], 'its sender is not sent it back');
  for (const c of [watcher, sender]) assert.deepEqual(c.updatesFor(sessionId, 'agent_message_chunk').map((u) => u.content.text), ['one ', 'two']);
});

test('kill -9 of a child between two updates of one event (a screenshot prompt): after the restart every other client has the prompt whole, its sender none of it', { timeout: 90_000 }, async (t) => {
  const { d, a: watcher, b: sender } = await daemonWithClients(t, { script: { replies: [{ when: 'screenshot', items: [{ hang: true }] }] } });
  const cwd = tempDir();
  const sessionId = (await sender.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  await watcher.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  const { pid } = await childOf(d, sessionId);
  // The image's line (12 MB) leaves the child over many pipe writes after the text block's line: a
  // kill as the watcher sees the text block lands before the image has left the child.
  const data = Buffer.alloc(9_000_000, 7).toString('base64');
  const prompt = sender.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'a screenshot' }, { type: 'image', mimeType: 'image/png', data }] } as never).catch((e: any) => e?.data?.code);
  await waitFor('the first block', () => watcher.updatesFor(sessionId, 'user_message_chunk').length > 0, 30_000);
  process.kill(pid, 'SIGKILL');
  assert.equal(await prompt, 'agent_crashed');
  await waitFor('the crashed turn’s end', () => watcher.updatesFor(sessionId, 'agent_thought_chunk').some((u) => /agent_crashed/.test(u.content.text)), 30_000);
  const blocks = (c: typeof watcher) => c.updatesFor(sessionId, 'user_message_chunk').map((u) => (u.content.type === 'image' ? u.content.data === data : u.content.text));
  assert.deepEqual(blocks(watcher), ['a screenshot', true]);
  assert.deepEqual(blocks(sender), []);
  assert.ok(sender.updatesFor(sessionId, 'agent_thought_chunk').some((u) => /agent_crashed/.test(u.content.text)), 'the sender is sent the turn’s end');
  assert.equal((await childOf(d, sessionId)).restarts, 1);
});
