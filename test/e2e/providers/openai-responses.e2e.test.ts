// troupe acp on openai/gpt-5 (Responses API via the openai SDK) against the replay server.
import { providerE2E } from './provider-e2e.js';

const CALL_ID = 'call_E2eReadNotes9QbVc0z3mYl8';

providerE2E({
  name: 'openai-responses',
  modelId: 'openai/gpt-5',
  configSection: 'openai',
  env: (url) => ({ OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: 'sk-e2e-test' }),
  streamPath: /^\/v1\/responses(\?|$)/,
  count: { path: /^\/v1\/responses\/input_tokens/, json: { object: 'response.input_tokens', input_tokens: 1_250 } },
  toolPreamble: '',
  echoedCall: (body) => body.input.find((i: any) => i.type === 'function_call' && i.call_id === CALL_ID && i.name === 'read_file' && JSON.parse(i.arguments).path === 'notes.txt'),
  // A function_call_output input item with the call's id.
  toolResult: (body) => body.input.find((i: any) => i.type === 'function_call_output' && i.call_id === CALL_ID)?.output,
  contextWindow: 400_000,
  // $1.25 / $10 per million: 480×1.25 + 40×10 = 1,000 and 620×1.25 + 25×10 = 1,025 micro-dollars.
  costs: [0.001, 0.001025],
  overflowText: 'Your input exceeds the context window of this model.',
});
