// troupe acp on google/gemini-2.5-pro (Gemini Developer API via @google/genai, whose default API
// version for the Developer API is v1 in the installed 3.3.0) against the replay server.
import { providerE2E } from './provider-e2e.js';

const SIGNATURE = 'CiQBE2Ee2eReadNotesSignatureFixture000AAAA';
const parts = (body: any, role: string): any[] => (body.contents ?? []).filter((c: any) => c.role === role).flatMap((c: any) => c.parts ?? []);

providerE2E({
  name: 'google',
  modelId: 'google/gemini-2.5-pro',
  configSection: 'google',
  env: (url) => ({ GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: 'AIza-e2e-test' }),
  streamPath: /^\/v1\/models\/gemini-2\.5-pro:streamGenerateContent/,
  count: { path: /^\/v1\/models\/gemini-2\.5-pro:countTokens/, json: { totalTokens: 1_250 } },
  toolPreamble: "I'll read the notes.",
  // The functionCall part comes back with its thought signature, as Gemini requires.
  echoedCall: (body) => parts(body, 'model').find((p) => p.functionCall?.name === 'read_file' && p.functionCall.args?.path === 'notes.txt' && p.thoughtSignature === SIGNATURE),
  // A functionResponse part of the next user turn, named after the function.
  toolResult: (body) => parts(body, 'user').find((p) => p.functionResponse?.name === 'read_file')?.functionResponse.response.output,
  contextWindow: 1_048_576,
  // $1.25 / $10 per million: 480×1.25 + 40×10 = 1,000 and 620×1.25 + 25×10 = 1,025 micro-dollars.
  costs: [0.001, 0.001025],
  overflowText: 'The input token count (1250000) exceeds the maximum number of tokens allowed (1048576).',
});
