// The scripted model's replies the turn-control, standalone and attach --interactive CLI tests share:
// a turn that hangs until cancelled, a plain answer, a failure, a turn in two parts, a tool call.
export const REPLIES = [
  { when: 'please hang', items: [{ text: 'Working on it.' }, { hang: true }] },
  { when: 'hello', items: [{ text: 'Hello there.' }] },
  { when: 'fail please', items: [{ error: { kind: 'auth', message: 'the key was refused' } }] },
  { when: 'in two parts', items: [{ text: 'Part one.' }, { delay_ms: 1500 }, { text: 'Part two.' }, { hang: true }] },
  { when: 'write it down', items: [{ tool_call: { name: 'write_file', input: { path: 'noted.txt', content: 'noted' } } }] },
  // What follows the tool's result (plain replies answer those calls, in order).
  [{ text: 'Noted.' }],
];
