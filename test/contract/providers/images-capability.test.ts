// Every adapter follows the model's resolved `images` capability, config overrides included: a model
// configured with `images: false` (a text-only model behind a vendor's base URL) gets a line for each
// image of its history, never the image, whichever adapter serves it (src/core/media-type.ts mediaPlan).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelMessage, ModelProvider } from '../../../src/core/provider.js';
import { AnthropicProvider } from '../../../src/providers/anthropic/anthropic.provider.js';
import { GoogleProvider } from '../../../src/providers/google/google.provider.js';
import { OpenAIChatProvider } from '../../../src/providers/openai/openai-chat.provider.js';
import { OpenAIResponsesProvider } from '../../../src/providers/openai/openai-responses.provider.js';
import { fixture, startReplayServer, type ReplayServer } from '../../support/replay-server.js';
import { collect, request } from './provider-contract.js';
import { PNG } from './conversation.js';

let server: ReplayServer;
before(async () => {
  server = await startReplayServer();
});
after(() => server.close());

/** How each adapter's line ends (the start names the image its own way: `image`, `binary resource <uri>`). */
const NO_IMAGES = '(image/png) omitted: the model does not take images]';

/** A prompt with an image, and one with an image embedded as a resource (a session switched to this model after them). */
const history: ModelMessage[] = [
  { role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image', data: PNG, mimeType: 'image/png' }] },
  { role: 'assistant', text: 'I see it.', toolCalls: [] },
  { role: 'user', content: [{ type: 'resource', resource: { uri: 'file:///shot.png', mimeType: 'image/png', blob: PNG } }] },
];

const off = (model: string) => ({ models: { [model]: { images: false } } });

const adapters: Array<{ name: string; model: string; make: (images: boolean) => ModelProvider; sse: string; userParts: (body: any) => unknown[] }> = [
  {
    name: 'anthropic',
    model: 'claude-sonnet-4-6',
    make: (images) => new AnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0, ...(images ? {} : off('claude-sonnet-4-6')) }),
    sse: 'anthropic-text.sse',
    userParts: (body) => body.messages.filter((m: any) => m.role === 'user').map((m: any) => m.content.map(({ cache_control: _c, ...b }: any) => b)),
  },
  {
    name: 'google',
    model: 'gemini-2.5-pro',
    make: (images) => new GoogleProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0, ...(images ? {} : off('gemini-2.5-pro')) }),
    sse: 'google-text.sse',
    userParts: (body) => body.contents.filter((c: any) => c.role === 'user').map((c: any) => c.parts),
  },
  {
    name: 'openai responses',
    model: 'gpt-5',
    make: (images) => new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries: 0, ...(images ? {} : off('gpt-5')) }),
    sse: 'openai-responses-text.sse',
    userParts: (body) => body.input.filter((i: any) => i.role === 'user').map((i: any) => i.content),
  },
  {
    name: 'openai-compatible chat',
    model: 'qwen3-vl',
    make: (images) => new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0, models: { 'qwen3-vl': { images } } }),
    sse: 'openai-chat-text.sse',
    userParts: (body) => body.messages.filter((m: any) => m.role === 'user').map((m: any) => m.content),
  },
];

for (const adapter of adapters) {
  test(`${adapter.name}: images: false in the config sends a line for each image of the history; the catalogue's images: true sends them`, async () => {
    const sent = async (images: boolean) => {
      const provider = adapter.make(images);
      assert.equal(provider.capabilities(adapter.model).images, images);
      server.enqueue({ sse: fixture(adapter.sse) });
      await collect(provider, request(adapter.model, { messages: history }));
      return JSON.stringify(adapter.userParts(server.requests.at(-1)!.body));
    };
    const without = await sent(false);
    assert.equal(without.split(NO_IMAGES).length - 1, 2, `a line for the image and one for the resource: ${without}`);
    assert.ok(!without.includes(PNG), `no image data is sent: ${without}`);
    const withImages = await sent(true);
    assert.ok(withImages.includes(PNG), withImages);
    assert.ok(!withImages.includes('omitted'), withImages);
  });
}
