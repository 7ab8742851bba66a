// troupe acp on openai-compatible/qwen3-coder (Chat Completions via the openai SDK, as llama.cpp or
// vLLM serve it) against the replay server. The config file declares the model and its price.
import { providerE2E } from './provider-e2e.js';

const CALL_ID = 'call_e2eReadNotes42';

providerE2E({
  name: 'openai-chat',
  modelId: 'openai-compatible/qwen3-coder',
  configSection: 'openai-compatible',
  configExtra: { models: { 'qwen3-coder': { contextWindow: 262_144, maxOutputTokens: 16_384, pricing: { input: 0.6, output: 2.4 } } } },
  env: (url) => ({ OPENAI_BASE_URL: `${url}/v1` }),
  streamPath: /^\/v1\/chat\/completions(\?|$)/,
  // Chat Completions has no count endpoint: preflight estimates, so no count request is expected.
  toolPreamble: '',
  echoedCall: (body) =>
    body.messages.find((m: any) => m.role === 'assistant' && m.tool_calls?.some((c: any) => c.id === CALL_ID && c.function.name === 'read_file' && JSON.parse(c.function.arguments).path === 'notes.txt')),
  // A `tool` role message with the call's id.
  toolResult: (body) => body.messages.find((m: any) => m.role === 'tool' && m.tool_call_id === CALL_ID)?.content,
  contextWindow: 262_144,
  // $0.6 / $2.4 per million (from the config): 480×0.6 + 40×2.4 = 384 and 620×0.6 + 25×2.4 = 432 micro-dollars.
  costs: [0.000384, 0.000432],
  overflowText: 'the request exceeds the available context size',
  // What llama.cpp's server sends when its context fills as it reads the prompt (a decode that finds
  // no free cell of its KV cache), typed a failure of the server: until 2026-12-07 the turn ended
  // `overloaded`, and the session never compacted.
  otherOverflows: [
    {
      label: "llama.cpp's 500 when its context fills",
      step: { status: 500, json: { error: { code: 500, message: 'Context size has been exceeded.', type: 'server_error' } } },
      text: 'Context size has been exceeded.',
    },
  ],
});
