// troupe acp on anthropic/claude-sonnet-5-5 (Messages API via @anthropic-ai/sdk) against the replay server.
import { providerE2E } from './provider-e2e.js';

const CALL_ID = 'toolu_01E2eReadNotes7xKq9mPzA4';
const blocks = (body: any): any[] => (body.messages ?? []).flatMap((m: any) => (Array.isArray(m.content) ? m.content.map((b: any) => ({ ...b, role: m.role })) : []));

providerE2E({
  name: 'anthropic',
  modelId: 'anthropic/claude-sonnet-5-5',
  configSection: 'anthropic',
  env: (url) => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'sk-ant-e2e-test' }),
  streamPath: /^\/v1\/messages(\?|$)/,
  count: { path: /^\/v1\/messages\/count_tokens/, json: { input_tokens: 1_250 } },
  toolPreamble: "I'll read the notes.",
  echoedCall: (body) => blocks(body).find((b) => b.role === 'assistant' && b.type === 'tool_use' && b.id === CALL_ID && b.name === 'read_file' && b.input?.path === 'notes.txt'),
  // A tool_result block in the next user message, naming the tool_use it answers.
  toolResult: (body) => {
    const last = body.messages.at(-1);
    const result = last?.role === 'user' ? last.content.find((b: any) => b.type === 'tool_result' && b.tool_use_id === CALL_ID) : undefined;
    return typeof result?.content === 'string' ? result.content : result?.content?.map((c: any) => c.text).join('');
  },
  contextWindow: 1_000_000,
  // $2 / $10 per million: 480×2 + 40×10 = 1,360 and 620×2 + 25×10 = 1,490 micro-dollars.
  costs: [0.00136, 0.00149],
  overflowText: 'prompt is too long: 1048943 tokens > 1000000 maximum',
});
