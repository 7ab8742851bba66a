// Every adapter follows the model's resolved `images` capability, config overrides included: a model
// configured with `images: false` (a text-only model behind a vendor's base URL) gets a line for each
// image, PDF, audio clip or other file of its history, never its data, whichever adapter serves it; a
// model that reads them gets those its API takes, and a line for the others, never a 400 from the
// vendor nor an attachment left out without a word (src/core/media-type.ts contentPlan, docs/providers.md).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ContentBlock } from '../../../src/core/events.js';
import { contentPlan } from '../../../src/core/media-type.js';
import type { ModelMessage, ModelProvider } from '../../../src/core/provider.js';
import { AnthropicProvider } from '../../../src/providers/anthropic/anthropic.provider.js';
import { GoogleProvider } from '../../../src/providers/google/google.provider.js';
import { OpenAIChatProvider } from '../../../src/providers/openai/openai-chat.provider.js';
import { OpenAIResponsesProvider } from '../../../src/providers/openai/openai-responses.provider.js';
import { fixture, startReplayServer, type ReplayServer } from '../../support/replay-server.js';
import { collect, request } from './provider-contract.js';
import { PNG } from './conversation.js';
import { pdfFile } from '../../support/pdf-file.js';

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

/** A user part as any adapter sends it: text, or data of a media type. */
type Part = string | { type: string; data: string } | { unknown: string };
const dataUrl = (url: string): Part => {
  const m = /^data:([^;]+);base64,(.*)$/.exec(url)!;
  return { type: m[1]!, data: m[2]! };
};

const off = (model: string) => ({ models: { [model]: { images: false } } });

const adapters: Array<{ name: string; model: string; make: (images: boolean) => ModelProvider; sse: string; userParts: (body: any) => unknown[]; parts: (body: any) => Part[] }> = [
  {
    name: 'anthropic',
    model: 'claude-sonnet-4-6',
    make: (images) => new AnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0, ...(images ? {} : off('claude-sonnet-4-6')) }),
    sse: 'anthropic-text.sse',
    userParts: (body) => body.messages.filter((m: any) => m.role === 'user').map((m: any) => m.content.map(({ cache_control: _c, ...b }: any) => b)),
    parts: (body) =>
      body.messages
        .filter((m: any) => m.role === 'user')
        .flatMap((m: any) => m.content)
        .map((b: any): Part => (b.type === 'text' ? b.text : b.type === 'image' || b.type === 'document' ? { type: b.source.media_type, data: b.source.data } : { unknown: b.type })),
  },
  {
    name: 'google',
    model: 'gemini-2.5-pro',
    make: (images) => new GoogleProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0, ...(images ? {} : off('gemini-2.5-pro')) }),
    sse: 'google-text.sse',
    userParts: (body) => body.contents.filter((c: any) => c.role === 'user').map((c: any) => c.parts),
    parts: (body) =>
      body.contents
        .filter((c: any) => c.role === 'user')
        .flatMap((c: any) => c.parts)
        .map((p: any): Part => (p.text !== undefined ? p.text : { type: p.inlineData.mimeType, data: p.inlineData.data })),
  },
  {
    name: 'openai responses',
    model: 'gpt-5',
    make: (images) => new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries: 0, ...(images ? {} : off('gpt-5')) }),
    sse: 'openai-responses-text.sse',
    userParts: (body) => body.input.filter((i: any) => i.role === 'user').map((i: any) => i.content),
    parts: (body) =>
      body.input
        .filter((i: any) => i.role === 'user')
        .flatMap((i: any) => i.content)
        .map((c: any): Part => (c.type === 'input_text' ? c.text : dataUrl(c.type === 'input_image' ? c.image_url : c.file_data))),
  },
  {
    name: 'openai-compatible chat',
    model: 'qwen3-vl',
    make: (images) => new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0, models: { 'qwen3-vl': { images } } }),
    sse: 'openai-chat-text.sse',
    userParts: (body) => body.messages.filter((m: any) => m.role === 'user').map((m: any) => m.content),
    parts: (body) =>
      body.messages
        .filter((m: any) => m.role === 'user')
        .flatMap((m: any) => (typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content))
        .map((c: any): Part => (c.type === 'text' ? c.text : dataUrl(c.image_url.url))),
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

const b64 = (s: string) => Buffer.from(s).toString('base64');
const PDF = b64('%PDF-1.4 a one-page report');
const WAV = b64('RIFF....WAVEfmt a short recording');
const ZIP = b64('PK\x03\x04 an archive');
const UNTYPED = b64('\x00\x01 some bytes');
const CSV = 'name,count\nfoo,1\n';

/** A prompt with every kind of attachment an ACP client can embed (audio arrives as a resource: troupe does not advertise `audio` blocks). */
const attachments: ModelMessage[] = [
  {
    role: 'user',
    content: [
      { type: 'text', text: 'What is in these?' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'file:///docs/report.pdf', mimeType: 'application/pdf', blob: PDF } },
      { type: 'resource', resource: { uri: 'file:///rec/memo.wav', mimeType: 'audio/wav', blob: WAV } },
      { type: 'resource', resource: { uri: 'file:///build.zip', mimeType: 'application/zip', blob: ZIP } },
      { type: 'resource', resource: { uri: 'file:///blob', blob: UNTYPED } },
      { type: 'resource', resource: { uri: 'file:///data.csv', mimeType: 'text/csv', blob: b64(CSV) } },
    ],
  },
];

/** What each adapter's API takes, of the attachments above, for a model that reads more than text. */
const takes: Record<string, string[]> = {
  anthropic: ['image/png', 'application/pdf'],
  google: ['image/png', 'application/pdf', 'audio/wav'],
  'openai responses': ['image/png', 'application/pdf'],
  'openai-compatible chat': ['image/png'],
};

const sentParts = async (adapter: (typeof adapters)[number], images: boolean) => {
  const provider = adapter.make(images);
  server.enqueue({ sse: fixture(adapter.sse) });
  await collect(provider, request(adapter.model, { messages: attachments }));
  return adapter.parts(server.requests.at(-1)!.body);
};

const csvText = `<resource uri="file:///data.csv">\n${CSV}\n</resource>`;
const untyped = '[binary resource file:///blob (unknown type) omitted: its type is not given]';

/** What every adapter sends a text-only model for `attachments`: the same lines, whichever vendor's API. */
const textOnly = [
  'What is in these?',
  '[image (image/png) omitted: the model does not take images]',
  '[binary resource file:///docs/report.pdf (application/pdf) omitted: the model takes text only]',
  '[binary resource file:///rec/memo.wav (audio/wav) omitted: the model takes text only]',
  '[binary resource file:///build.zip (application/zip) omitted: the model takes text only]',
  untyped,
  csvText,
];

for (const adapter of adapters) {
  test(`${adapter.name}: a text-only model gets the same line as on every adapter for an image, a PDF, audio and other files, and no data`, async () => {
    // Joined as Chat Completions joins a user message of text alone (one string: some local servers refuse the array form).
    assert.equal((await sentParts(adapter, false)).join('\n\n'), textOnly.join('\n\n'));
  });
}

for (const adapter of adapters) {
  test(`${adapter.name}: a model that reads media gets each attachment its API takes, and a line naming each other one`, async () => {
    const parts = await sentParts(adapter, true);
    const data: Record<string, string> = { 'image/png': PNG, 'application/pdf': PDF, 'audio/wav': WAV, 'application/zip': ZIP };
    const names: Record<string, string> = { 'application/pdf': 'file:///docs/report.pdf', 'audio/wav': 'file:///rec/memo.wav', 'application/zip': 'file:///build.zip' };
    assert.equal(parts[0], 'What is in these?');
    ['image/png', 'application/pdf', 'audio/wav', 'application/zip'].forEach((type, i) => {
      const part = parts[i + 1];
      if (takes[adapter.name]!.includes(type)) assert.deepEqual(part, { type, data: data[type] }, `${type}: ${JSON.stringify(part)}`);
      else assert.match(String(part), new RegExp(`^\\[binary resource ${names[type]} \\(${type}\\) omitted: .+\\]$`), `${type} goes as a line: ${JSON.stringify(part)}`);
    });
    assert.deepEqual(parts.slice(5), [untyped, csvText]);
  });
}

/**
 * An embedded resource whose blob counts how often it is read: an adapter reads it to decode a text
 * file, or to plan and send an attachment, and a conversation sends the same block on every request.
 */
function countingResource(uri: string, mimeType: string, blob: string): { block: ContentBlock; reads: () => number } {
  let reads = 0;
  const resource = {
    uri,
    mimeType,
    get blob() {
      reads++;
      return blob;
    },
  };
  return { block: { type: 'resource', resource }, reads: () => reads };
}

for (const adapter of adapters) {
  test(`${adapter.name}: a text file sent as a blob is decoded once in a session, not again on every request`, async () => {
    // Until 2026-12-07 every request decoded every text blob of the conversation again (Gemini's twice).
    const csv = countingResource('file:///data.csv', 'text/csv', b64(CSV));
    const provider = adapter.make(true);
    const messages: ModelMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'Sum the counts' }, csv.block] }];
    for (let turn = 1; turn <= 3; turn++) {
      server.enqueue({ sse: fixture(adapter.sse) });
      await collect(provider, request(adapter.model, { messages }));
      // (Chat Completions joins a user message of text alone into one string.)
      const parts = adapter.parts(server.requests.at(-1)!.body);
      assert.equal(parts.filter((p) => typeof p === 'string' && p.includes(csvText)).length, 1, `request ${turn} carries the text: ${JSON.stringify(parts)}`);
      messages.push({ role: 'assistant', text: 'Done.', toolCalls: [] }, { role: 'user', content: [{ type: 'text', text: `And again (${turn})` }] });
    }
    assert.equal(csv.reads(), 1, 'one decode for three requests');
  });
}

test('google: each attachment of a request is planned once, as contentPlan plans it, not once to size the inline data and again to send it', async () => {
  const google = adapters.find((a) => a.name === 'google')!;
  // What one plan of the block reads, whatever the plan does inside.
  const once = countingResource('file:///docs/report.pdf', 'application/pdf', PDF);
  contentPlan(once.block, { images: true, takes: () => true, refused: '' });
  const pdf = countingResource('file:///docs/report.pdf', 'application/pdf', PDF);
  const provider = google.make(true);
  for (let turn = 1; turn <= 3; turn++) {
    server.enqueue({ sse: fixture(google.sse) });
    await collect(provider, request(google.model, { messages: [{ role: 'user', content: [{ type: 'text', text: 'Read it' }, pdf.block] }] }));
    assert.deepEqual(google.parts(server.requests.at(-1)!.body)[1], { type: 'application/pdf', data: PDF });
    assert.equal(pdf.reads(), turn * once.reads(), `request ${turn}: one plan each`);
  }
});

test('openai-compatible: a HEIC photo or an SVG goes as a line (llama.cpp: 400 "Failed to load image or audio file"); PNG, JPEG, GIF and WebP go', async () => {
  const chat = adapters.find((a) => a.name === 'openai-compatible chat')!;
  const types = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/heic', 'image/svg+xml'];
  server.enqueue({ sse: fixture(chat.sse) });
  const content = types.map((mimeType) => ({ type: 'image' as const, data: PNG, mimeType }));
  await collect(chat.make(true), request(chat.model, { messages: [{ role: 'user', content }] }));
  assert.deepEqual(chat.parts(server.requests.at(-1)!.body), [
    ...types.slice(0, 4).map((type) => ({ type, data: PNG })),
    '[image (image/heic) omitted: the server takes PNG, JPEG, GIF and WebP images only]',
    '[image (image/svg+xml) omitted: the server takes PNG, JPEG, GIF and WebP images only]',
  ]);
});

test('anthropic: an image over the API\'s 5 MB (of base64) goes as a line with its size; one of 5 MB goes whole', async () => {
  // The API refuses the larger one ("image exceeds 5 MB maximum: 5242884 bytes > 5242880 bytes"), and
  // the prompt stays in the session: every later request would be refused with it.
  const limit = 5 * 1024 * 1024;
  const fits = 'A'.repeat(limit);
  const over = 'B'.repeat(limit + 4);
  const anthropic = adapters.find((a) => a.name === 'anthropic')!;
  server.enqueue({ sse: fixture(anthropic.sse) });
  const big: ModelMessage[] = [
    { role: 'user', content: [{ type: 'text', text: 'Compare' }, { type: 'image', data: fits, mimeType: 'image/png' }, { type: 'image', data: over, mimeType: 'image/jpeg', uri: 'file:///photos/IMG_2.jpg' }] },
  ];
  await collect(anthropic.make(true), request(anthropic.model, { messages: big }));
  assert.deepEqual(anthropic.parts(server.requests.at(-1)!.body), [
    'Compare',
    { type: 'image/png', data: fits },
    '[image file:///photos/IMG_2.jpg (image/jpeg, 5.1 MB) omitted: Anthropic takes images of at most 5 MB]',
  ]);
});

test('anthropic and openai responses: a PDF over the APIs\' 100 pages goes as a line with its page count; one of 100 pages goes whole', async () => {
  // Both refuse the larger one ("A maximum of 100 PDF pages may be provided"), on every later request too.
  const book = pdfFile(240, 'packed');
  const report = pdfFile(100);
  const content: ModelMessage[] = [
    {
      role: 'user',
      content: [
        { type: 'resource', resource: { uri: 'file:///docs/report.pdf', mimeType: 'application/pdf', blob: report } },
        { type: 'resource', resource: { uri: 'file:///docs/book.pdf', mimeType: 'application/pdf', blob: book } },
      ],
    },
  ];
  for (const [name, says] of [['anthropic', 'Anthropic takes'], ['openai responses', 'the model takes']] as const) {
    const adapter = adapters.find((a) => a.name === name)!;
    server.enqueue({ sse: fixture(adapter.sse) });
    await collect(adapter.make(true), request(adapter.model, { messages: content }));
    assert.deepEqual(adapter.parts(server.requests.at(-1)!.body), [
      { type: 'application/pdf', data: report },
      `[binary resource file:///docs/book.pdf (application/pdf, 240 pages) omitted: ${says} at most 100 pages of PDF in a request, the newest PDFs first]`,
    ], name);
  }
});

test('anthropic and openai responses: PDFs attached in turn that pass 100 pages together: the newest go, the oldest goes as a line', async () => {
  // Three 40-page papers: the third turn's request would carry 120 pages, refused, and so would every later one.
  const papers = [pdfFile(40), pdfFile(40, 'packed'), pdfFile(40)];
  const conversation: ModelMessage[] = papers.flatMap((blob, i): ModelMessage[] => [
    { role: 'user', content: [{ type: 'text', text: `Paper ${i + 1}` }, { type: 'resource', resource: { uri: `file:///papers/${i + 1}.pdf`, mimeType: 'application/pdf', blob } }] },
    ...(i < 2 ? [{ role: 'assistant' as const, text: 'Read it.', toolCalls: [] }] : []),
  ]);
  for (const [name, says] of [['anthropic', 'Anthropic takes'], ['openai responses', 'the model takes']] as const) {
    const adapter = adapters.find((a) => a.name === name)!;
    server.enqueue({ sse: fixture(adapter.sse) });
    await collect(adapter.make(true), request(adapter.model, { messages: conversation }));
    assert.deepEqual(adapter.parts(server.requests.at(-1)!.body), [
      'Paper 1',
      `[binary resource file:///papers/1.pdf (application/pdf, 40 pages) omitted: ${says} at most 100 pages of PDF in a request, the newest PDFs first]`,
      'Paper 2',
      { type: 'application/pdf', data: papers[1] },
      'Paper 3',
      { type: 'application/pdf', data: papers[2] },
    ], name);
  }
});

test('google: a PDF over Gemini\'s 1,000 pages goes as a line with its page count; one of 240 goes inline', async () => {
  const google = adapters.find((a) => a.name === 'google')!;
  const book = pdfFile(240, 'packed');
  const archive = pdfFile(1001, 'packed');
  server.enqueue({ sse: fixture(google.sse) });
  const content: ModelMessage[] = [
    {
      role: 'user',
      content: [
        { type: 'resource', resource: { uri: 'file:///docs/book.pdf', mimeType: 'application/pdf', blob: book } },
        { type: 'resource', resource: { uri: 'file:///docs/archive.pdf', mimeType: 'application/pdf', blob: archive } },
      ],
    },
  ];
  await collect(google.make(true), request(google.model, { messages: content }));
  assert.deepEqual(google.parts(server.requests.at(-1)!.body), [
    { type: 'application/pdf', data: book },
    '[binary resource file:///docs/archive.pdf (application/pdf, 1001 pages) omitted: Gemini takes PDFs of at most 1000 pages]',
  ]);
});

test('google: a PDF over Gemini\'s 50 MB goes as a line with its size; one of 50 MB goes inline', async () => {
  // Gemini refuses the larger one ("PDF files up to 50MB"), on every later request too. Its size is
  // the file's, not its base64's: the one of exactly 50,000,000 bytes is 66.7 MB of base64, and goes.
  const google = adapters.find((a) => a.name === 'google')!;
  const pdfOfSize = (bytes: number) => {
    const head = Buffer.from(pdfFile(3), 'base64');
    return Buffer.concat([head, Buffer.alloc(bytes - head.length, 0x20)]).toString('base64');
  };
  const fits = pdfOfSize(50_000_000);
  const over = pdfOfSize(50_000_001);
  server.enqueue({ sse: fixture(google.sse) });
  const content: ModelMessage[] = [
    {
      role: 'user',
      content: [
        { type: 'resource', resource: { uri: 'file:///docs/scans.pdf', mimeType: 'application/pdf', blob: fits } },
        { type: 'resource', resource: { uri: 'file:///docs/atlas.pdf', mimeType: 'application/pdf', blob: over } },
      ],
    },
  ];
  await collect(google.make(true), request(google.model, { messages: content }));
  const parts = google.parts(server.requests.at(-1)!.body);
  server.requests.length = 0; // 67 MB of request: not kept for the tests after this one
  assert.deepEqual(
    parts.map((p) => (typeof p === 'string' ? p : [(p as { type: string }).type, (p as { data: string }).data === fits ? 'the 50 MB PDF' : 'other data'])),
    [['application/pdf', 'the 50 MB PDF'], '[binary resource file:///docs/atlas.pdf (application/pdf, 50.1 MB) omitted: Gemini takes PDFs of at most 50 MB]'],
  );
});

test('google: attachments of a conversation that pass Gemini\'s 100 MB of inline data together: the newest go, the oldest goes as a line with its size', async () => {
  // A recording, a screenshot and a video attached in turn, 100,000,001 characters of base64 in all:
  // Gemini refuses the request (400), and, the attachments staying in the session, every later one.
  const google = adapters.find((a) => a.name === 'google')!;
  const recording = 'A'.repeat(45_000_001);
  const screenshot = 'B'.repeat(10_000_000);
  const video = 'C'.repeat(45_000_000);
  const conversation: ModelMessage[] = [
    { role: 'user', content: [{ type: 'text', text: 'Transcribe' }, { type: 'resource', resource: { uri: 'file:///rec/meeting.wav', mimeType: 'audio/wav', blob: recording } }] },
    { role: 'assistant', text: 'Done.', toolCalls: [] },
    { role: 'user', content: [{ type: 'text', text: 'And this' }, { type: 'image', data: screenshot, mimeType: 'image/png' }] },
    { role: 'assistant', text: 'Seen.', toolCalls: [] },
    { role: 'user', content: [{ type: 'text', text: 'Now the demo' }, { type: 'resource', resource: { uri: 'file:///demo.mp4', mimeType: 'video/mp4', blob: video } }] },
  ];
  server.enqueue({ sse: fixture(google.sse) });
  await collect(google.make(true), request(google.model, { messages: conversation }));
  const parts = google.parts(server.requests.at(-1)!.body);
  server.requests.length = 0; // 55 MB of request: not kept for the tests after this one
  assert.equal(parts[1], '[binary resource file:///rec/meeting.wav (audio/wav, 43.0 MB) omitted: Gemini takes at most 100 MB of inline data in a request, the newest attachments first]');
  assert.deepEqual(parts.filter((p) => typeof p !== 'string').map((p) => (p as { type: string; data: string }).data.length), [screenshot.length, video.length]);
  assert.deepEqual(parts.filter((p) => typeof p === 'string' && !p.startsWith('[')), ['Transcribe', 'And this', 'Now the demo']);
});
