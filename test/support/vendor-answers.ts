// Vendors' answers as recorded, for more than one test to replay (test/support/replay-server.ts).
import type { ReplayStep } from './replay-server.js';

/** Gemini's refusal of a key that is not one: a 400, not a 401, told by its reason API_KEY_INVALID. */
export const GEMINI_KEY_INVALID: ReplayStep = {
  status: 400,
  json: {
    error: {
      code: 400,
      message: 'API key not valid. Please pass a valid API key.',
      status: 'INVALID_ARGUMENT',
      details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } }],
    },
  },
};
