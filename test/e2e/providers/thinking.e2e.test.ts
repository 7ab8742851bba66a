// Thinking turned on in the config (`providers.<id>.thinkingBudget`), through `troupe acp`: what each
// vendor's SDK sends for it (recorded by the replay server), and the streamed thinking reaching the
// client as agent_thought_chunk. Before the setting existed, no turn ever asked for thinking.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { fixture, startReplayServer } from '../../support/replay-server.js';

const BUDGET = 8_000;
const THOUGHT = 'The user greets me. I should greet back.';

interface ThinkingCase {
  modelId: string;
  section: 'anthropic' | 'openai' | 'google';
  env(url: string): Record<string, string>;
  modelCall: RegExp;
  countAnswer: unknown;
  stream: string;
  /** The fields of the model call's body that ask for thinking. */
  asked(body: any): unknown;
  expected: unknown;
}

const CASES: ThinkingCase[] = [
  {
    // A model that takes a budget: budget_tokens, below max_tokens.
    modelId: 'anthropic/claude-haiku-4-5',
    section: 'anthropic',
    env: (url) => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'sk-ant-e2e-test' }),
    modelCall: /^\/v1\/messages(\?|$)/,
    countAnswer: { input_tokens: 1_250 },
    stream: 'anthropic-thinking.sse',
    asked: (body) => ({ thinking: body.thinking, max_tokens: body.max_tokens }),
    expected: { thinking: { type: 'enabled', budget_tokens: BUDGET }, max_tokens: 64_000 },
  },
  {
    // A model that decides its own budget: the setting only turns thinking on.
    modelId: 'anthropic/claude-sonnet-5-5',
    section: 'anthropic',
    env: (url) => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'sk-ant-e2e-test' }),
    modelCall: /^\/v1\/messages(\?|$)/,
    countAnswer: { input_tokens: 1_250 },
    stream: 'anthropic-thinking.sse',
    asked: (body) => ({ thinking: body.thinking }),
    expected: { thinking: { type: 'adaptive', display: 'summarized' } },
  },
  {
    // 8,000 tokens is medium effort; the reasoning summaries are what streams as thinking.
    modelId: 'openai/gpt-5',
    section: 'openai',
    env: (url) => ({ OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: 'sk-e2e-test' }),
    modelCall: /^\/v1\/responses(\?|$)/,
    countAnswer: { object: 'response.input_tokens', input_tokens: 1_250 },
    stream: 'openai-responses-thinking.sse',
    asked: (body) => ({ reasoning: body.reasoning, include: body.include }),
    expected: { reasoning: { effort: 'medium', summary: 'auto' }, include: ['reasoning.encrypted_content'] },
  },
  {
    modelId: 'google/gemini-2.5-pro',
    section: 'google',
    env: (url) => ({ GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: 'AIza-e2e-test' }),
    modelCall: /:streamGenerateContent/,
    countAnswer: { totalTokens: 1_250 },
    stream: 'google-thinking.sse',
    asked: (body) => ({ thinkingConfig: body.generationConfig?.thinkingConfig }),
    expected: { thinkingConfig: { includeThoughts: true, thinkingBudget: BUDGET } },
  },
];

for (const c of CASES) {
  test(`${c.modelId}: thinkingBudget in the config asks for thinking, and the thinking streams to the client`, { timeout: 30_000 }, async (t) => {
    const server = await startReplayServer();
    t.after(() => server.close());
    const home = mkdtempSync(join(tmpdir(), 'troupe-thinking-home-'));
    const configHome = join(home, 'config');
    mkdirSync(join(configHome, 'troupe'), { recursive: true });
    writeFileSync(join(configHome, 'troupe', 'config.json'), JSON.stringify({ providers: { [c.section]: { maxRetries: 0, thinkingBudget: BUDGET } } }));
    const child = AcpChild.start({ home, env: { XDG_CONFIG_HOME: configHome, TROUPE_MODEL: c.modelId, ...c.env(server.url) } });
    t.after(() => child.close());
    await child.initialize();
    const sessionId = await child.newSession(mkdtempSync(join(tmpdir(), 'troupe-thinking-ws-')));
    // The session's first prompt is counted first.
    server.enqueue({ json: c.countAnswer }, { sse: fixture(c.stream) });

    const res = await child.prompt(sessionId, 'hello');
    assert.equal(res.stopReason, 'end_turn', child.stderr.slice(-2000));
    const calls = server.requests.filter((r) => c.modelCall.test(r.url));
    assert.equal(calls.length, 1, server.requests.map((r) => r.url).join(', '));
    assert.deepEqual(c.asked(calls[0]!.body), c.expected);
    const thought = child.updatesFor(sessionId, 'agent_thought_chunk').map((u) => u.content.text).join('');
    assert.equal(thought, THOUGHT);
    assert.deepEqual(child.schemaErrors, []);
  });
}
