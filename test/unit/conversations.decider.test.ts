/** Given / when / then over the conversations decider: pure, no I/O; texts sealed with a real data key. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { conversations, type ConversationCommand } from '../../src/commands/conversations/decider.js';
import type { ConversationEvent } from '../../src/commands/conversations/events.js';
import { openText, sealText } from '../../src/crypto/data-seal.js';
import { BadRequestError, ConflictError, DomainError, NotFoundError } from '../../src/errors.js';
import { DeciderSpec } from '../support/decider-spec.js';

const spec = DeciderSpec.for(conversations);
const key = randomBytes(32);
const seal = (text: string) => sealText(key, text);

const title = seal('Trip to Lisbon');
const prompt = seal('You are a travel agent');
const started: ConversationEvent = {
  type: 'ConversationStarted',
  data: { conversation_id: 'c1', tenant_id: 't1', user_id: 'u1', title, model: 'gpt-4o', preset_id: null, temperature: 0.5, max_tokens: null, system_prompt: prompt },
};
const noReplyFields = { model_requested: null, model_served: null, finish_reason: null, usage: null, latency_ms: null, usage_request_id: null };
const userMessage = (id: string, text: string): ConversationEvent => ({ type: 'ConversationMessageAppended', data: { message_id: id, role: 'user', content: seal(text), ...noReplyFields } });
const reply = (id: string, text: string): ConversationEvent => ({
  type: 'ConversationMessageAppended',
  data: { message_id: id, role: 'assistant', content: seal(text), model_requested: 'gpt-4o', model_served: 'gpt-4o-2024', finish_reason: 'stop', usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 }, latency_ms: 420, usage_request_id: 'req-1' },
});
const deleted: ConversationEvent = { type: 'ConversationDeleted', data: { by: 'u1' } };
const chat = [started, userMessage('m1', 'hi'), reply('m2', 'hello'), userMessage('m3', 'more?'), reply('m4', 'sure')];

describe('conversations decider', () => {
  it('starts with its owner and settings; unset settings are null', () => {
    spec
      .given([])
      .when({ type: 'StartConversation', conversationId: 'c1', tenantId: 't1', userId: 'u1', title, settings: { model: 'gpt-4o', temperature: 0.5, systemPrompt: prompt } })
      .then([started]);
    const state = spec.given([started]).state;
    expect(state).toMatchObject({ status: 'active', tenantId: 't1', userId: 'u1', settings: { model: 'gpt-4o', presetId: null, temperature: 0.5, maxTokens: null, systemPrompt: prompt } });
    spec
      .given([])
      .when({ type: 'StartConversation', conversationId: 'c2', tenantId: 't1', userId: 'u1', title: null, settings: {} })
      .then([{ type: 'ConversationStarted', data: { conversation_id: 'c2', tenant_id: 't1', user_id: 'u1', title: null, model: null, preset_id: null, temperature: null, max_tokens: null, system_prompt: null } }]);
  });

  it('refuses to start twice, even after deletion', () => {
    const start: ConversationCommand = { type: 'StartConversation', conversationId: 'c1', tenantId: 't1', userId: 'u1', title: null, settings: {} };
    spec.given([started]).when(start).thenThrows(ConflictError, { code: 'conversation_exists' });
    spec.given([started, deleted]).when(start).thenThrows(ConflictError, { code: 'conversation_exists' });
  });

  it('refuses clear text wherever a user text goes', () => {
    spec.given([]).when({ type: 'StartConversation', conversationId: 'c1', tenantId: 't1', userId: 'u1', title: 'clear title', settings: {} }).thenThrows(DomainError, { code: 'not_sealed' }, 'title');
    spec.given([]).when({ type: 'StartConversation', conversationId: 'c1', tenantId: 't1', userId: 'u1', title: null, settings: { systemPrompt: 'clear' } }).thenThrows(DomainError, { code: 'not_sealed' });
    spec.given([started]).when({ type: 'AppendMessage', messageId: 'm1', role: 'user', content: 'clear' }).thenThrows(DomainError, { code: 'not_sealed' }, 'content');
    spec.given([started]).when({ type: 'RenameConversation', title: 'clear' }).thenThrows(DomainError, { code: 'not_sealed' });
    spec.given([started]).when({ type: 'ChangeConversationSettings', changes: { systemPrompt: 'clear' } }).thenThrows(DomainError, { code: 'not_sealed' });
    spec.given(chat).when({ type: 'EditMessage', messageId: 'm1', content: 'clear' }).thenThrows(DomainError, { code: 'not_sealed' });
    expect(conversations.events.safeParse({ ...userMessage('m1', 'x'), data: { ...userMessage('m1', 'x').data, content: 'clear' } }).success).toBe(false);
  });

  it('checks temperature and max_tokens', () => {
    const start = (settings: object): ConversationCommand => ({ type: 'StartConversation', conversationId: 'c1', tenantId: 't1', userId: 'u1', title: null, settings });
    spec.given([]).when(start({ temperature: 2.5 })).thenThrows(BadRequestError, { code: 'invalid_temperature', param: 'temperature' });
    spec.given([]).when(start({ maxTokens: 0 })).thenThrows(BadRequestError, { code: 'invalid_max_tokens', param: 'max_tokens' });
    spec.given([started]).when({ type: 'ChangeConversationSettings', changes: { maxTokens: 1.5 } }).thenThrows(BadRequestError, { code: 'invalid_max_tokens' });
  });

  it('appends user, assistant and system messages with what the reply carries', () => {
    const hi = userMessage('m1', 'hi') as Extract<ConversationEvent, { type: 'ConversationMessageAppended' }>;
    spec.given([started]).when({ type: 'AppendMessage', messageId: 'm1', role: 'user', content: hi.data.content }).then([hi]);
    const answer = reply('m2', 'hello');
    const d = answer.data as Extract<ConversationEvent, { type: 'ConversationMessageAppended' }>['data'];
    spec
      .given([started, hi])
      .when({ type: 'AppendMessage', messageId: 'm2', role: 'assistant', content: d.content, modelRequested: 'gpt-4o', modelServed: 'gpt-4o-2024', finishReason: 'stop', usage: d.usage, latencyMs: 420, usageRequestId: 'req-1' })
      .then([answer]);
    const note = seal('be brief');
    spec.given([started]).when({ type: 'AppendMessage', messageId: 's1', role: 'system', content: note }).then([{ type: 'ConversationMessageAppended', data: { message_id: 's1', role: 'system', content: note, ...noReplyFields } }]);
    expect(spec.given(chat).state.messages).toEqual([
      { id: 'm1', role: 'user' },
      { id: 'm2', role: 'assistant' },
      { id: 'm3', role: 'user' },
      { id: 'm4', role: 'assistant' },
    ]);
  });

  it('keeps an aborted reply with its finish_reason, and treats a repeated message id as a retry', () => {
    const partial = seal('half an ans');
    spec
      .given([started, userMessage('m1', 'hi')])
      .when({ type: 'AppendMessage', messageId: 'm2', role: 'assistant', content: partial, finishReason: 'aborted', modelRequested: 'gpt-4o' })
      .then([{ type: 'ConversationMessageAppended', data: { ...noReplyFields, message_id: 'm2', role: 'assistant', content: partial, finish_reason: 'aborted', model_requested: 'gpt-4o' } }]);
    spec.given(chat).when({ type: 'AppendMessage', messageId: 'm2', role: 'assistant', content: seal('hello') }).thenNothingHappened();
  });

  it('refuses an unknown role', () => {
    spec.given([started]).when({ type: 'AppendMessage', messageId: 'm1', role: 'tool' as 'user', content: seal('x') }).thenThrows(BadRequestError, { code: 'invalid_role', param: 'role' });
  });

  it('renames, always (a sealed title cannot be compared)', () => {
    const renamed = seal('Lisbon in May');
    spec.given([started]).when({ type: 'RenameConversation', title: renamed }).then([{ type: 'ConversationRenamed', data: { title: renamed } }]);
  });

  it('a generated title never replaces one the conversation has', () => {
    const generated = seal('Weekend plans');
    const untitled: ConversationEvent = { ...started, data: { ...started.data, title: null } } as ConversationEvent;
    spec.given([untitled]).when({ type: 'RenameConversation', title: generated, generated: true }).then([{ type: 'ConversationRenamed', data: { title: generated, generated: true } }]);
    spec.given([started]).when({ type: 'RenameConversation', title: generated, generated: true }).thenNothingHappened();
    const renamedByUser: ConversationEvent = { type: 'ConversationRenamed', data: { title: seal('mine') } };
    spec.given([untitled, renamedByUser]).when({ type: 'RenameConversation', title: generated, generated: true }).thenNothingHappened();
    spec.given([untitled, { type: 'ConversationRenamed', data: { title: generated, generated: true } }]).when({ type: 'RenameConversation', title: generated, generated: true }).thenNothingHappened();
  });

  it('regenerate supersedes the assistant replies after the last user message, and nothing when there are none', () => {
    spec.given(chat).when({ type: 'SupersedeLastReply' }).then([{ type: 'ConversationMessagesSuperseded', data: { superseded_ids: ['m4'], reason: 'regenerate' } }]);
    expect(spec.given([...chat, { type: 'ConversationMessagesSuperseded', data: { superseded_ids: ['m4'], reason: 'regenerate' } }]).state.messages.map((m) => m.id)).toEqual(['m1', 'm2', 'm3']);
    spec.given(chat.slice(0, 4)).when({ type: 'SupersedeLastReply' }).thenNothingHappened();
    spec.given([...chat, deleted]).when({ type: 'SupersedeLastReply' }).thenThrows(NotFoundError, { code: 'conversation_not_found' });
  });

  it('changes only the settings that differ, and clears with null', () => {
    spec
      .given([started])
      .when({ type: 'ChangeConversationSettings', changes: { model: 'gpt-4o', temperature: 1, presetId: 'p1', maxTokens: 100 } })
      .then([{ type: 'ConversationSettingsChanged', data: { temperature: 1, preset_id: 'p1', max_tokens: 100 } }]);
    spec.given([started]).when({ type: 'ChangeConversationSettings', changes: { model: 'gpt-4o', temperature: 0.5 } }).thenNothingHappened();
    spec.given([started]).when({ type: 'ChangeConversationSettings', changes: { systemPrompt: null, model: null } }).then([{ type: 'ConversationSettingsChanged', data: { model: null, system_prompt: null } }]);
    const changed: ConversationEvent = { type: 'ConversationSettingsChanged', data: { temperature: 1, system_prompt: null } };
    expect(spec.given([started, changed]).state.settings).toEqual({ model: 'gpt-4o', presetId: null, temperature: 1, maxTokens: null, systemPrompt: null });
  });

  it('pins, unpins, archives and unarchives; repeats decide nothing', () => {
    const pinned: ConversationEvent = { type: 'ConversationPinned', data: {} };
    const archived: ConversationEvent = { type: 'ConversationArchived', data: {} };
    spec.given([started]).when({ type: 'PinConversation' }).then([pinned]);
    spec.given([started, pinned]).when({ type: 'PinConversation' }).thenNothingHappened();
    spec.given([started, pinned]).when({ type: 'UnpinConversation' }).then([{ type: 'ConversationUnpinned', data: {} }]);
    spec.given([started]).when({ type: 'UnpinConversation' }).thenNothingHappened();
    spec.given([started]).when({ type: 'ArchiveConversation' }).then([archived]);
    spec.given([started, archived]).when({ type: 'ArchiveConversation' }).thenNothingHappened();
    spec.given([started, archived]).when({ type: 'UnarchiveConversation' }).then([{ type: 'ConversationUnarchived', data: {} }]);
    spec.given([started]).when({ type: 'UnarchiveConversation' }).thenNothingHappened();
    expect(spec.given([started, pinned, archived]).state).toMatchObject({ pinned: true, archived: true });
  });

  it('edits a user message and supersedes every later one; superseded ids are not reused', () => {
    const edited = seal('hi again');
    spec.given(chat).when({ type: 'EditMessage', messageId: 'm3', content: edited }).then([{ type: 'ConversationMessageEdited', data: { message_id: 'm3', content: edited, superseded_ids: ['m4'] } }]);
    spec.given(chat).when({ type: 'EditMessage', messageId: 'm1', content: edited }).then([{ type: 'ConversationMessageEdited', data: { message_id: 'm1', content: edited, superseded_ids: ['m2', 'm3', 'm4'] } }]);
    const afterEdit = [...chat, { type: 'ConversationMessageEdited', data: { message_id: 'm1', content: edited, superseded_ids: ['m2', 'm3', 'm4'] } } as ConversationEvent];
    expect(spec.given(afterEdit).state.messages).toEqual([{ id: 'm1', role: 'user' }]);
    spec.given(afterEdit).when({ type: 'AppendMessage', messageId: 'm2', role: 'assistant', content: seal('x') }).thenNothingHappened();
    spec.given(afterEdit).when({ type: 'EditMessage', messageId: 'm3', content: edited }).thenThrows(NotFoundError, { code: 'message_not_found' });
  });

  it('refuses to edit a message that is not the user’s, or that does not exist', () => {
    spec.given(chat).when({ type: 'EditMessage', messageId: 'm2', content: seal('x') }).thenThrows(BadRequestError, { code: 'message_not_editable', param: 'message_id' });
    spec.given(chat).when({ type: 'EditMessage', messageId: 'nope', content: seal('x') }).thenThrows(NotFoundError, { code: 'message_not_found' });
  });

  it('deletes once; after that every command answers not found and delete decides nothing', () => {
    spec.given(chat).when({ type: 'DeleteConversation', by: 'u1' }).then([deleted]);
    spec.given([...chat, deleted]).when({ type: 'DeleteConversation', by: 'u1' }).thenNothingHappened();
    const refused: ConversationCommand[] = [
      { type: 'AppendMessage', messageId: 'm9', role: 'user', content: seal('x') },
      { type: 'RenameConversation', title: seal('x') },
      { type: 'ChangeConversationSettings', changes: { model: 'x' } },
      { type: 'PinConversation' },
      { type: 'UnpinConversation' },
      { type: 'ArchiveConversation' },
      { type: 'UnarchiveConversation' },
      { type: 'EditMessage', messageId: 'm1', content: seal('x') },
    ];
    for (const command of refused) {
      spec.given([...chat, deleted]).when(command).thenThrows(NotFoundError, { code: 'conversation_not_found' });
      spec.given([]).when(command).thenThrows(NotFoundError, { code: 'conversation_not_found' });
    }
    spec.given([]).when({ type: 'DeleteConversation', by: null }).thenThrows(NotFoundError, { code: 'conversation_not_found' });
    expect(spec.given([...chat, deleted]).state).toMatchObject({ status: 'deleted', messages: [] });
  });

  it('no event of a whole conversation carries any of its texts in the clear', () => {
    const texts = ['Trip to Lisbon', 'You are a travel agent', 'where should I eat tonight', 'Try the pastel de nata', 'Lisbon in May', 'a new persona', 'and for lunch'];
    const commands: ConversationCommand[] = [
      { type: 'StartConversation', conversationId: 'c1', tenantId: 't1', userId: 'u1', title: seal(texts[0]!), settings: { systemPrompt: seal(texts[1]!) } },
      { type: 'AppendMessage', messageId: 'm1', role: 'user', content: seal(texts[2]!) },
      { type: 'AppendMessage', messageId: 'm2', role: 'assistant', content: seal(texts[3]!), finishReason: 'stop' },
      { type: 'RenameConversation', title: seal(texts[4]!) },
      { type: 'ChangeConversationSettings', changes: { systemPrompt: seal(texts[5]!) } },
      { type: 'EditMessage', messageId: 'm1', content: seal(texts[6]!) },
      { type: 'DeleteConversation', by: 'u1' },
    ];
    const log: ConversationEvent[] = [];
    for (const command of commands) log.push(...conversations.decide(command, log.reduce(conversations.evolve, conversations.initialState)));
    expect(log.map((e) => e.type)).toEqual(['ConversationStarted', 'ConversationMessageAppended', 'ConversationMessageAppended', 'ConversationRenamed', 'ConversationSettingsChanged', 'ConversationMessageEdited', 'ConversationDeleted']);
    const json = JSON.stringify(log);
    for (const text of texts) {
      expect(json).not.toContain(text);
      for (const word of text.split(' ').filter((w) => w.length > 4)) expect(json).not.toContain(word);
    }
    // ...yet the key opens them all (what destroying the key takes away).
    const edited = log[5] as Extract<ConversationEvent, { type: 'ConversationMessageEdited' }>;
    expect(openText(key, edited.data.content)).toBe('and for lunch');
  });
});
