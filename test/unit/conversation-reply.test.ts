/**
 * The pure parts of a conversation's reply: settings (model, temperature, max_tokens) from the
 * request, conversation, user and preset; the upstream messages and their trimming to the
 * context window; context lengths; titles; the recorder that tees the relay's stream.
 */
import { describe, expect, it } from 'vitest';
import { ReplyRecorder } from '../../src/relay/ingress/conversations/recorder.js';
import { contextLengthOf, fitToContext, replyRequest, replySettings, type ReplySettingsSources } from '../../src/relay/ingress/conversations/request.js';
import { cleanTitle, titleFromText } from '../../src/relay/ingress/conversations/title.js';
import type { AnswerWriter } from '../../src/relay/relay.js';
import type { RelayPreset } from '../../src/relay/presets.js';
import type { Message } from '../../src/relay/schema.js';
import { countPromptTokens, countTokens } from '../../src/relay/tokens.js';

const preset: RelayPreset = {
  context: [
    { role: 'user', content: 'Example question' },
    { role: 'assistant', content: 'Example answer' },
  ],
  model_preferences: ['preset-a', 'preset-b'],
  temperature: 0.1,
  max_tokens: 100,
  system_prompt: 'You are the preset.',
};

const sources = (over: Partial<ReplySettingsSources> = {}): ReplySettingsSources => ({
  asked: undefined,
  conversation: { model: null, temperature: null, maxTokens: null },
  user: { default_model: null, temperature: 0.7, max_tokens: 2048 },
  preset: null,
  ...over,
});
const all = () => true;

describe('replySettings', () => {
  it('takes the model from the request, else the conversation, else the user, else the preset (first usable)', () => {
    const full = sources({ asked: 'asked', conversation: { model: 'conv', temperature: null, maxTokens: null }, user: { default_model: 'user', temperature: 0.7, max_tokens: 2048 }, preset });
    expect(replySettings(full, all).model).toBe('asked');
    expect(replySettings({ ...full, asked: undefined }, all).model).toBe('conv');
    expect(replySettings({ ...full, asked: undefined, conversation: { ...full.conversation, model: null } }, all).model).toBe('user');
    const presetOnly = sources({ preset });
    expect(replySettings(presetOnly, all).model).toBe('preset-a');
    expect(replySettings(presetOnly, (m) => m === 'preset-b').model).toBe('preset-b');
    expect(replySettings(presetOnly, () => false).model).toBe('preset-a');
  });

  it('refuses when no model is named anywhere', () => {
    expect(() => replySettings(sources(), all)).toThrow(expect.objectContaining({ code: 'model_required', param: 'model', status: 400 }));
  });

  it("takes temperature and max_tokens from the conversation, else the user's defaults", () => {
    expect(replySettings(sources({ asked: 'm' }), all)).toEqual({ model: 'm', temperature: 0.7, maxTokens: 2048 });
    expect(replySettings(sources({ asked: 'm', conversation: { model: null, temperature: 0, maxTokens: 10 } }), all)).toEqual({ model: 'm', temperature: 0, maxTokens: 10 });
  });
});

describe('replyRequest', () => {
  const settings = { model: 'm', temperature: 0.5, maxTokens: 100 };
  const history = [
    { role: 'user', content: 'first question' },
    { role: 'assistant', content: 'first answer' },
    { role: 'user', content: 'second question' },
  ];

  it('sends the system prompt, the preset context, the history and the new message, in that order', () => {
    const { body, omitted } = replyRequest({ settings, stream: true, systemPrompt: 'Conversation prompt', preset, history, contextTokens: 100_000 });
    expect(body).toMatchObject({ model: 'm', temperature: 0.5, max_tokens: 100, stream: true });
    expect(body.messages).toEqual([
      { role: 'system', content: 'Conversation prompt' },
      { role: 'user', content: 'Example question' },
      { role: 'assistant', content: 'Example answer' },
      ...history,
    ]);
    expect(omitted).toBe(0);
  });

  it("uses the preset's system prompt when the conversation has none", () => {
    const { body } = replyRequest({ settings, stream: false, systemPrompt: null, preset, history, contextTokens: 100_000 });
    expect(body.messages[0]).toEqual({ role: 'system', content: 'You are the preset.' });
  });

  it('leaves the oldest turns out when the history does not fit, keeping system, context and the new message', () => {
    const long = Array.from({ length: 20 }, (_, i) => [
      { role: 'user', content: `question ${i} ${'word '.repeat(50)}` },
      { role: 'assistant', content: `answer ${i} ${'word '.repeat(50)}` },
    ]).flat();
    const turns = [...long, { role: 'user', content: 'the new message' }];
    const contextTokens = 700;
    const { body, omitted } = replyRequest({ settings, stream: true, systemPrompt: 'Prompt', preset, history: turns, contextTokens });
    expect(omitted).toBeGreaterThan(0);
    expect(body.messages.length).toBe(1 + 2 + turns.length - omitted);
    expect(body.messages.slice(0, 3).map((m) => m.content)).toEqual(['Prompt', 'Example question', 'Example answer']);
    expect(body.messages.at(-1)!.content).toBe('the new message');
    // The kept history starts with a user message and fits, with room for max_tokens.
    expect(body.messages[3]!.role).toBe('user');
    expect(countPromptTokens(body.messages)).toBeLessThanOrEqual(contextTokens - settings.maxTokens);
    // One more turn would not have fitted.
    const kept = turns.length - omitted;
    const withOneMore = [...body.messages.slice(0, 3), turns[turns.length - kept - 1]!, ...body.messages.slice(3)] as Message[];
    expect(countPromptTokens(withOneMore)).toBeGreaterThan(contextTokens - settings.maxTokens);
  });

  it('always keeps the message being answered, even when nothing else fits', () => {
    const { body, omitted } = replyRequest({ settings, stream: true, systemPrompt: null, preset: null, history, contextTokens: 10 });
    expect(body.messages).toEqual([{ role: 'user', content: 'second question' }]);
    expect(omitted).toBe(2);
  });

  it('does not tokenize a history whose bytes fit anyway', () => {
    const turns: Message[] = [
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
      { role: 'user', content: 'c' },
    ];
    expect(fitToContext([], turns, 1000)).toEqual(turns);
  });
});

describe('contextLengthOf', () => {
  const settings = { contextTokens: 8192, contextLengths: new Map([['gpt-4o-mini', 5000]]) };
  it('uses the setting, else the table by prefix (longest first), else the default', () => {
    expect(contextLengthOf('gpt-4o-mini', settings)).toBe(5000);
    expect(contextLengthOf('gpt-4o-2024-08-06', settings)).toBe(128_000);
    expect(contextLengthOf('gpt-4-turbo', settings)).toBe(128_000);
    expect(contextLengthOf('gpt-4', settings)).toBe(8192);
    expect(contextLengthOf('claude-3-5-sonnet', settings)).toBe(200_000);
    expect(contextLengthOf('my-own-model', settings)).toBe(8192);
  });
});

describe('titles', () => {
  it('takes the first six words, at most 60 characters, cut at a word', () => {
    expect(titleFromText('  How do I\n bake   bread at home without yeast please?')).toBe('How do I bake bread at');
    expect(titleFromText('Supercalifragilisticexpialidocious is a long word indeed and more')).toBe('Supercalifragilisticexpialidocious is a long word indeed');
    expect(titleFromText('x'.repeat(100))).toBe('x'.repeat(60));
    expect(titleFromText('Short')).toBe('Short');
  });

  it("cleans a model's answer: one line, no quotes, no final period", () => {
    expect(cleanTitle('"Baking Bread at Home."\n')).toBe('Baking Bread at Home');
    expect(cleanTitle('Title: Yeast-free bread')).toBe('Yeast-free bread');
    expect(cleanTitle('')).toBe('');
  });
});

/** A writer that keeps what it is given. */
class Written implements AnswerWriter {
  out: string[] = [];
  sent: string | null = null;
  closed = false;
  private listeners: Array<() => void> = [];
  setHeader(): void {}
  send(_s: number, _h: Record<string, string>, body: string): void {
    this.sent = body;
  }
  start(): void {
    this.out.push('<start>');
  }
  write(text: string): boolean {
    this.out.push(text);
    return true;
  }
  writeLast(text: string): void {
    this.out.push(`<last>${text}`);
  }
  drained(): Promise<void> {
    return Promise.resolve();
  }
  end(): void {
    this.out.push('<end>');
  }
  onClose(listener: () => void): void {
    this.listeners.push(listener);
  }
  offClose(listener: () => void): void {
    this.listeners = this.listeners.filter((l) => l !== listener);
  }
}

const chunk = (content: string | null, finish: string | null = null) => `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: content === null ? {} : { content }, finish_reason: finish }] })}\n\n`;

describe('ReplyRecorder', () => {
  it('forwards the chunks as they are, reads the text (events split anywhere) and keeps [DONE] and the end back', () => {
    const inner = new Written();
    const recorder = new ReplyRecorder(inner);
    recorder.start(200, {});
    const stream = chunk('Hel') + chunk('lo ') + chunk('wörld') + chunk(null, 'stop');
    recorder.write(stream.slice(0, 17));
    recorder.write(stream.slice(17, 90));
    recorder.writeLast(stream.slice(90) + 'data: [DONE]\n\n');
    recorder.end();
    expect(inner.out.join('').replace('<start>', '')).toBe(stream);
    expect(inner.out).not.toContain('<end>');
    expect(recorder.text).toBe('Hello wörld');
    expect(recorder.finishReason).toBe('stop');
  });

  it('reads an in-stream error', () => {
    const recorder = new ReplyRecorder(new Written());
    recorder.start(200, {});
    recorder.writeLast(chunk('Par') + 'data: {"error":{"message":"cut","type":"upstream_error","code":"upstream_stream_interrupted","param":null}}\n\ndata: [DONE]\n\n');
    expect(recorder.text).toBe('Par');
    expect(recorder.streamError).toEqual({ message: 'cut', code: 'upstream_stream_interrupted' });
  });

  it('keeps a whole answer instead of sending it, and forwards other answers', () => {
    const inner = new Written();
    const recorder = new ReplyRecorder(inner);
    recorder.send(200, {}, JSON.stringify({ object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Whole' }, finish_reason: 'length' }] }));
    expect(inner.sent).toBeNull();
    expect([recorder.text, recorder.finishReason]).toEqual(['Whole', 'length']);
    recorder.send(500, {}, '{"error":{}}');
    expect(inner.sent).toBe('{"error":{}}');
  });

  it('stop() looks like a client gone to the relay, once, while the client stays', () => {
    const inner = new Written();
    const recorder = new ReplyRecorder(inner);
    let calls = 0;
    const listener = () => (calls += 1);
    recorder.onClose(listener);
    expect(recorder.closed).toBe(false);
    recorder.stop();
    recorder.stop();
    expect([recorder.closed, recorder.stopped, inner.closed, calls]).toEqual([true, true, false, 1]);
  });

  it('counts the text it read', () => {
    const recorder = new ReplyRecorder(new Written());
    recorder.start(200, {});
    recorder.write(chunk('one two three'));
    expect(countTokens(recorder.text)).toBeGreaterThan(0);
  });
});
