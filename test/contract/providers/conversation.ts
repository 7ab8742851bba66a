/** A conversation with every message kind, shared by the "what the adapter sent" tests. */
import type { ModelMessage, ProviderEvent, ReasoningPart } from '../../../src/core/provider.js';

export const SYSTEM = 'You are a careful coding agent.';
export const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

export function conversation(reasoning: ReasoningPart[]): ModelMessage[] {
  return [
    { role: 'user', content: [{ type: 'text', text: 'Read src/index.ts' }, { type: 'image', data: PNG, mimeType: 'image/png' }] },
    { role: 'assistant', text: 'Reading it.', thinking: 'I need the file.', toolCalls: [{ id: 'call_1', name: 'read_file', input: { path: 'src/index.ts' } }], reasoning },
    { role: 'tool', results: [{ toolCallId: 'call_1', name: 'read_file', output: 'export {}', isError: false }] },
    { role: 'user', content: [{ type: 'text', text: 'Now summarise.' }] },
  ];
}

/** Reasoning parts from every vendor: each adapter must send back its own and only its own. */
export const MIXED_REASONING: ReasoningPart[] = [
  { provider: 'anthropic', kind: 'thinking', text: 'I need the file.', data: 'sig-anthropic' },
  { provider: 'openai', kind: 'reasoning', id: 'rs_1', text: 'I need the file.', data: 'enc-openai' },
  { provider: 'google', kind: 'thought_signature', id: 'call_1', data: 'sig-google' },
];

/** The reasoning parts a stream produced, as the engine keeps them on the assistant message. */
export function reasoningOf(events: ProviderEvent[]): ReasoningPart[] {
  return events.flatMap((e) => (e.type === 'reasoning_part' ? [e.part] : []));
}
