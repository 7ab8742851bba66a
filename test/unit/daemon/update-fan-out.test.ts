/**
 * UpdateFanOut across a child's restart: the event a crash cut between two of its updates (a prompt
 * of several blocks) is sent again whole by the new child, and each connection is sent only what it
 * lacks of it: the rest, never its own prompt's blocks, and no `_troupe/updates_lost`, which is for
 * seqs that really went back. And across a load: its connection is sent nothing before the child
 * marks its replay's start (`replayStarted`), then each update once, in order; no other connection
 * is sent the replay. The connections are recording stand-ins for RelayConnection.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../../src/core/ports.js';
import { UpdateFanOut } from '../../../src/daemon/relay/update-fan-out.js';
import type { UpdateLine } from '../../../src/wire/update-line.js';
import { recordingConnection } from '../../support/recording-connection.js';

const connection = recordingConnection;

/** A fan-out of session S with a connection of each name attached (no replay). */
function fanOutTo(...names: string[]) {
  const fan = new UpdateFanOut(() => 'S', silentLogger);
  const conns = names.map(connection);
  for (const c of conns) fan.attach(c.conn, false);
  return { fan, conns };
}

/** A line of session S; `json` names it, for reading what each connection got. */
const line = (seq: number, name: string, prompter?: number): UpdateLine => ({ sessionId: 'S', seq, json: name, ...(prompter === undefined ? {} : { prompter }) });

test('after a restart, the rest of an event the crash cut reaches each connection once, and a prompt’s sender never gets its blocks', () => {
  const { fan, conns: [watcher, sender] } = fanOutTo('watcher', 'sender');
  const senderOf = (p: number) => (p === 7 ? sender.conn : undefined);

  // Seq 2 is a prompt of two blocks, sent by `sender`; the child died after the first.
  fan.updates([line(1, 'created'), line(2, 'block 0', 7)], senderOf);
  assert.equal(fan.sentSeq, 2);
  fan.newProcess();
  const joiner = connection('joiner');
  fan.attach(joiner.conn, false);
  // The new child's catch-up starts with seq 2 again, whole and untagged (src/acp/session-updates.ts).
  fan.updates([line(2, 'block 0'), line(2, 'block 1'), line(3, 'crash end')], senderOf);
  fan.updates([line(4, 'next turn')], senderOf);

  assert.deepEqual(watcher.got, ['created', 'block 0', 'block 1', 'crash end', 'next turn']);
  assert.deepEqual(sender.got, ['created', 'crash end', 'next turn']);
  assert.deepEqual(joiner.got, ['crash end', 'next turn'], 'a connection that joined between is sent none of the cut event');
  for (const c of [watcher, sender, joiner]) assert.deepEqual(c.told, [], `${c.name} is told nothing was lost`);

  // Seqs that go back later are still the sign of a lost write.
  fan.updates([line(3, 'a seq reused')], senderOf);
  assert.deepEqual(
    watcher.told.map((m: any) => [m.method, m.params.keptSeq]),
    [['_troupe/updates_lost', 2]],
  );
  assert.equal(watcher.got.at(-1), 'a seq reused');
});

test('a parsed echo is passed over for its sender the same way, the rest of its event too', () => {
  const { fan, conns: [watcher, sender] } = fanOutTo('watcher', 'sender');
  const echo = (text: string) => ({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 'S', update: { sessionUpdate: 'user_message_chunk', content: { type: 'text', text }, _meta: { troupe: { seq: 5 } } } } });
  const sent: string[] = [];
  (watcher.conn as any).send = async (m: any) => void sent.push(`watcher ${m.params.update.content.text}`);
  (sender.conn as any).send = async (m: any) => void sent.push(`sender ${m.params.update.content.text}`);
  fan.notification(echo('first') as never, sender.conn);
  fan.newProcess();
  fan.notification(echo('first') as never);
  fan.notification(echo('second') as never);
  assert.deepEqual(sent, ['watcher first', 'watcher second']);
});

test('a load of its own shows a prompt’s sender its prompt; seqs that went back are other events’, sent to it', () => {
  const { fan, conns: [sender] } = fanOutTo('sender');
  const senderOf = () => sender.conn;
  fan.updates([line(1, 'created'), line(2, 'block 0', 7), line(2, 'block 1', 7), line(3, 'answer')], senderOf);
  assert.deepEqual(sender.got, ['created', 'answer']);
  // Its session/load: the child replays from seq 1.
  fan.attach(sender.conn, true);
  fan.startReplay(sender.conn);
  fan.replayStarted(3);
  fan.updates([line(1, 'created'), line(2, 'block 0'), line(2, 'block 1'), line(3, 'answer')], senderOf);
  fan.endReplay();
  assert.deepEqual(sender.got.slice(2), ['created', 'block 0', 'block 1', 'answer']);

  // A second prompt's echo, then a log that lost seqs 4 and 5: the events that take them are sent.
  const other = connection('other');
  fan.attach(other.conn, false);
  fan.updates([line(4, 'second prompt', 8), line(5, 'second answer')], senderOf);
  fan.updates([line(4, 'after the loss'), line(5, 'and more')], senderOf);
  assert.deepEqual(sender.got.slice(6), ['second answer', 'after the loss', 'and more']);
  assert.deepEqual(other.got, ['second prompt', 'second answer', 'after the loss', 'and more']);
});

test('a load that waited for the restarted child is sent none of its catch-up live: its replay brings the whole history once', () => {
  const { fan, conns: [watcher] } = fanOutTo('watcher');
  const loader = connection('loader');
  fan.updates([line(1, '1'), line(2, '2'), line(3, '3 block 0')], () => undefined);
  // The loader's session/load waits behind another; the child dies; the load goes to the new child,
  // which boots (its resume sends the catch-up) before it is sent the load.
  fan.hold(loader.conn);
  fan.newProcess();
  fan.startReplay(loader.conn);
  fan.updates([line(3, '3 block 0'), line(3, '3 block 1'), line(4, '4')], () => undefined); // the catch-up
  fan.replayStarted(4);
  fan.updates([line(1, '1'), line(2, '2'), line(3, '3 block 0'), line(3, '3 block 1'), line(4, '4')], () => undefined); // its replay
  fan.endReplay();
  fan.updates([line(5, '5')], () => undefined);
  assert.deepEqual(watcher.got, ['1', '2', '3 block 0', '3 block 1', '4', '5']);
  assert.deepEqual(loader.got, ['1', '2', '3 block 0', '3 block 1', '4', '5']);
});

test('a load sent while the child was down is sent its replay once, and then what is new', () => {
  const { fan, conns: [watcher, client] } = fanOutTo('watcher', 'client');
  fan.updates([line(1, '1'), line(2, '2'), line(3, '3 block 0')], () => undefined);
  // The child dies; `client` reconnects and loads the session during the backoff (the load is queued).
  fan.newProcess();
  fan.attach(client.conn, true);
  fan.startReplay(client.conn);
  fan.updates([line(3, '3 block 0'), line(3, '3 block 1'), line(4, '4')], () => undefined);
  fan.replayStarted(4);
  fan.updates([line(1, '1'), line(2, '2'), line(3, '3 block 0'), line(3, '3 block 1'), line(4, '4')], () => undefined);
  fan.endReplay();
  fan.updates([line(5, '5')], () => undefined);
  assert.deepEqual(watcher.got, ['1', '2', '3 block 0', '3 block 1', '4', '5']);
  assert.deepEqual(client.got, ['1', '2', '3 block 0', ...['1', '2', '3 block 0', '3 block 1', '4'], '5']);
});

test('a load while a turn streams: its connection is sent nothing until the replay starts, then the history and what the child held back, each once and in order', () => {
  const { fan, conns: [watcher] } = fanOutTo('watcher');
  fan.updates([line(1, '1'), line(2, '2'), line(3, '3')], () => undefined);
  const loader = connection('loader');
  fan.attach(loader.conn, true);
  fan.startReplay(loader.conn);
  // The turn goes on before the child reads the load: all of it is in the log its replay reads.
  fan.updates([line(4, '4')], () => undefined);
  fan.notification({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 'S', update: { sessionUpdate: 'agent_message_chunk', _meta: { troupe: { seq: 5 } } } } } as never);
  fan.replayStarted(5);
  fan.updates([line(1, '1'), line(2, '2')], () => undefined); // the replay, in pages
  fan.updates([line(3, '3'), line(4, '4'), line(5, '5'), line(6, '6')], () => undefined); // its last page, then what the child held back
  fan.endReplay();
  fan.updates([line(7, '7')], () => undefined);
  assert.deepEqual(loader.got, ['1', '2', '3', '4', '5', '6', '7']);
  assert.deepEqual(loader.told, [], 'not the live 5 ahead of its history');
  assert.deepEqual(watcher.got, ['1', '2', '3', '4', '6', '7']);
  assert.equal(watcher.told.length, 1, 'the parsed 5, once; not the replay, and no updates_lost');
});

test('a replay of history no connection was sent (a daemon started again) goes to its loader only', () => {
  const { fan, conns: [watcher] } = fanOutTo('watcher'); // attached before the session sent anything
  const loader = connection('loader');
  fan.attach(loader.conn, true);
  fan.startReplay(loader.conn);
  fan.replayStarted(2);
  fan.updates([line(1, '1'), line(2, '2'), line(3, 'live')], () => undefined);
  fan.endReplay();
  fan.updates([line(4, 'next')], () => undefined);
  assert.deepEqual(loader.got, ['1', '2', 'live', 'next']);
  assert.deepEqual(watcher.got, ['live', 'next']);
  assert.equal(fan.sentSeq, 4, 'what the loader was sent counts for a restart’s catch-up');
});

test('a load answered without a replay (an error) leaves its connection taking live updates from then', () => {
  const { fan, conns: [client] } = fanOutTo('client');
  fan.updates([line(1, '1')], () => undefined);
  fan.attach(client.conn, true);
  fan.startReplay(client.conn);
  fan.updates([line(2, '2')], () => undefined);
  fan.endReplay();
  fan.updates([line(3, '3')], () => undefined);
  const other = connection('other');
  fan.attach(other.conn, true);
  fan.startReplay(other.conn);
  fan.updates([line(4, '4')], () => undefined);
  fan.dropReplay(); // its process died, or the session failed
  fan.updates([line(5, '5')], () => undefined);
  assert.deepEqual(client.got, ['1', '3', '4', '5']);
  assert.deepEqual(other.got, ['5']);
});

test('seqs that went back: a connection is told of the lost updates it was sent, one that joined after them is not told', () => {
  const { fan, conns: [watcher] } = fanOutTo('watcher');
  fan.updates([line(1, '1'), line(2, '2'), line(3, '3')], () => undefined);
  const joiner = connection('joiner');
  fan.attach(joiner.conn, false);
  const late = connection('late'); // joins after 2 and 3, which the log then loses
  fan.updates([line(4, '4')], () => undefined);
  fan.attach(late.conn, false);
  fan.updates([line(2, 'new 2'), line(3, 'new 3')], () => undefined);
  const lost = (c: ReturnType<typeof connection>) => c.told.map((m: any) => [m.method, m.params.keptSeq, m.params.sentSeq]);
  assert.deepEqual(lost(watcher), [['_troupe/updates_lost', 1, 4]]);
  assert.deepEqual(lost(joiner), [['_troupe/updates_lost', 1, 4]], 'it was sent 4');
  assert.deepEqual(lost(late), [], 'sent nothing before the loss, so it lost nothing');
  for (const c of [watcher, joiner, late]) assert.deepEqual(c.got.slice(-2), ['new 2', 'new 3'], `${c.name} is sent the events that took the seqs`);
});

test('notifications without a seq reach every connection, a prompt’s sender too', () => {
  const { fan, conns: [sender, other] } = fanOutTo('sender', 'other');
  fan.updates([line(1, 'echo', 7)], () => sender.conn);
  fan.notification({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 'S', update: { sessionUpdate: 'available_commands_update', availableCommands: [] } } } as never);
  assert.deepEqual([sender.told.length, other.told.length], [1, 1]);
});
