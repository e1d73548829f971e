import { describe, expect, it } from 'vitest';
import { applyEvent, EMPTY_STREAM, foldEvents } from './stream';

const chunk = (content: string | null) => JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }] });

describe('reply stream accumulation', () => {
  it('adds the deltas in order and ignores empty, role-only and non-JSON events', () => {
    const state = foldEvents([JSON.stringify({ choices: [{ delta: { role: 'assistant', content: '' } }] }), chunk('Hel'), 'not json', chunk(null), chunk('lo'), JSON.stringify({ choices: [] })]);
    expect(state).toEqual({ text: 'Hello', reply: null, error: null });
  });

  it('takes the stored reply from the conversation.reply event (its text wins)', () => {
    const reply = { object: 'conversation.reply', conversation_id: 'c', user_message: null, assistant_message: { id: 'm', content: 'Hel' }, usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 }, omitted_messages: 0, stopped: true };
    const state = foldEvents([chunk('Hel'), chunk('lo'), JSON.stringify(reply)]);
    expect(state.text).toBe('Hel');
    expect(state.reply?.stopped).toBe(true);
  });

  it('keeps the text when stopped before any reply text', () => {
    const reply = { object: 'conversation.reply', conversation_id: 'c', user_message: null, assistant_message: null, usage: { prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 }, omitted_messages: 0, stopped: true };
    expect(applyEvent(EMPTY_STREAM, JSON.stringify(reply)).text).toBe('');
  });

  it('reports an error object with its code', () => {
    const state = foldEvents([chunk('a'), JSON.stringify({ error: { message: 'upstream failed', code: 'upstream_error' } })]);
    expect(state).toMatchObject({ text: 'a', error: 'upstream failed (upstream_error)' });
  });
});
