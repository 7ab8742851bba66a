// Error responses whose body is not the vendor's JSON (a proxy's or gateway's page), through the real SDKs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { isProviderError, type ModelProvider } from '../../../src/core/provider.js';
import { AnthropicProvider } from '../../../src/providers/anthropic/anthropic.provider.js';
import { GoogleProvider } from '../../../src/providers/google/google.provider.js';
import { OpenAIChatProvider } from '../../../src/providers/openai/openai-chat.provider.js';
import { OpenAIResponsesProvider } from '../../../src/providers/openai/openai-responses.provider.js';
import { startReplayServer, type ReplayServer } from '../../support/replay-server.js';
import { collect, request } from './provider-contract.js';

let server: ReplayServer;
before(async () => {
  server = await startReplayServer();
});
after(() => server.close());

// nginx's 502 page, with the kilobytes of styling a gateway's page carries.
const PAGE = `<html>\r\n<head><title>502 Bad Gateway</title><style>${'body{font-family:sans-serif}'.repeat(200)}</style></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;

const adapters: [string, string, (url: string) => ModelProvider][] = [
  ['anthropic', 'claude-haiku-4-5', (url) => new AnthropicProvider({ apiKey: 'k', baseURL: url, maxRetries: 0 })],
  ['openai', 'gpt-5', (url) => new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${url}/v1`, maxRetries: 0 })],
  ['openai-compatible', 'm', (url) => new OpenAIChatProvider({ baseURL: `${url}/v1`, maxRetries: 0 })],
  ['google', 'gemini-2.5-pro', (url) => new GoogleProvider({ apiKey: 'k', baseURL: url, maxRetries: 0 })],
];

for (const [name, model, make] of adapters) {
  test(`${name}: an HTML error page is told in a line (its title), not as the page`, async () => {
    server.enqueue({ status: 502, text: PAGE, contentType: 'text/html' });
    await assert.rejects(collect(make(server.url), request(model)), (err) => {
      assert.ok(isProviderError(err, 'overloaded'), String(err));
      assert.match(err.vendorMessage, /an HTML page \("502 Bad Gateway"\), not the API's answer/);
      assert.ok(err.vendorMessage.length < 200, err.vendorMessage);
      assert.equal(err.status, 502);
      return true;
    });
  });
}

test('a plain-text error body stays as it is', async () => {
  server.enqueue({ status: 403, text: 'Forbidden: this network does not allow api.openai.com', contentType: 'text/plain' });
  await assert.rejects(collect(adapters[1]![2](server.url), request('gpt-5')), (err) => isProviderError(err, 'auth') && err.vendorMessage === '403 Forbidden: this network does not allow api.openai.com');
});
