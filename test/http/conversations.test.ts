/**
 * Conversations, the read side, end to end on the real server, embedded and on two distributed
 * instances (NATS + MariaDB + Redis): create, read with message pages, list with cursors and
 * filters, change, delete, search, sync with tombstones, export, admin counts; only the owner
 * ever sees a conversation (another user, another tenant, an admin: 404).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, loggedInUser, startApp, type RunningApp } from '../support/app.js';
import { appendMessages } from '../support/conversations.js';
import { appModes } from '../support/modes.js';

const services = inject('services');
const urls = inject('serviceUrls');
const MODES = appModes(services, urls);

describe.each(MODES.map((m) => [m.name, m] as const))('conversations (%s)', (name, mode) => {
  let a: RunningApp;
  /** A second instance on the same stores (distributed); the same one embedded. */
  let b: RunningApp;
  let cleanup: () => Promise<void> = async () => undefined;
  let me: { tenantId: string; userId: string; token: string };

  beforeAll(async () => {
    if (!mode.enabled) return;
    const { env, cleanup: drop } = mode.env();
    cleanup = drop;
    a = await startApp({ ...env, HEALTH_CHECK_ENABLED: 'false' });
    b = name === 'distributed' ? await startApp({ ...env, HEALTH_CHECK_ENABLED: 'false' }) : a;
    me = await loggedInUser(a, 'user');
  });
  afterAll(async () => {
    if (b !== a) await b?.close();
    await a?.close();
    await cleanup();
  });

  const create = async (body: Record<string, unknown> = {}, token = me.token) => {
    const res = await call(`${a.url}/v1/conversations`, { token, body });
    expect(res.status, res.text).toBe(201);
    return res.json;
  };

  it.runIf(mode.enabled)('creates a conversation and reads it back at once, on the other instance too', async () => {
    const before = Math.floor(Date.now() / 1000);
    const conv = await create({ title: 'Trip to Lisbon', model: 'gpt-x', system_prompt: 'You plan trips.', temperature: 0.3, max_tokens: 500 });
    expect(conv).toMatchObject({
      object: 'conversation',
      title: 'Trip to Lisbon',
      model: 'gpt-x',
      preset_id: null,
      system_prompt: 'You plan trips.',
      temperature: 0.3,
      max_tokens: 500,
      pinned: false,
      archived: false,
      message_count: 0,
      last_message_at: null,
    });
    expect(conv.id).toMatch(/^conv_/);
    expect(conv.created_at).toBeGreaterThanOrEqual(before);
    const got = await call(`${b.url}/v1/conversations/${conv.id}`, { token: me.token });
    expect(got.status, got.text).toBe(200);
    expect(got.json).toMatchObject({ id: conv.id, title: 'Trip to Lisbon', messages: [], has_more: false });

    // Read-your-writes across instances: a change on one is there when the other is asked next.
    const patched = await call(`${b.url}/v1/conversations/${conv.id}`, { method: 'PATCH', token: me.token, body: { title: 'Lisbon, 4 days', pinned: true, temperature: null } });
    expect(patched.status, patched.text).toBe(200);
    const again = await call(`${a.url}/v1/conversations/${conv.id}`, { token: me.token });
    expect(again.json).toMatchObject({ title: 'Lisbon, 4 days', pinned: true, temperature: null, model: 'gpt-x' });
  });

  it.runIf(mode.enabled)('an empty body makes an untitled conversation; an unknown preset is 404 preset_not_found', async () => {
    expect(await create()).toMatchObject({ title: null, model: null, system_prompt: null, temperature: null });
    const res = await call(`${a.url}/v1/conversations`, { token: me.token, body: { preset_id: 'pst_nope' } });
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('preset_not_found');
    const bad = await call(`${a.url}/v1/conversations`, { token: me.token, body: { temperature: 3 } });
    expect(bad.status).toBe(400);
  });

  it.runIf(mode.enabled)('a built-in preset can be named', async () => {
    const presets = await call(`${a.url}/api/presets?scope=builtin&limit=1`, { token: me.token });
    const presetId = presets.json.data[0]?.id as string | undefined;
    if (presetId === undefined) return;
    expect(await create({ preset_id: presetId })).toMatchObject({ preset_id: presetId });
  });

  it.runIf(mode.enabled)('only the owner sees a conversation: another user, another tenant, an admin get 404', async () => {
    const conv = await create({ title: 'private thoughts' });
    const sameTenant = await loggedInUser(a, 'user', me.tenantId);
    const otherTenant = await loggedInUser(a, 'user');
    const tenantAdmin = await loggedInUser(a, 'admin', me.tenantId);
    for (const token of [sameTenant.token, otherTenant.token, tenantAdmin.token, a.adminToken]) {
      for (const [method, path, body] of [
        ['GET', '', undefined],
        ['PATCH', '', { title: 'mine now' }],
        ['DELETE', '', undefined],
        ['GET', '/export', undefined],
      ] as const) {
        const res = await call(`${b.url}/v1/conversations/${conv.id}${path}`, { method, token, body });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.json.error.code).toBe('conversation_not_found');
      }
      const list = await call(`${a.url}/v1/conversations`, { token });
      expect(list.json.data.map((c: { id: string }) => c.id)).not.toContain(conv.id);
      const found = await call(`${a.url}/v1/conversations/search?q=private`, { token });
      expect(found.json.data.map((c: { id: string }) => c.id)).not.toContain(conv.id);
    }
    expect((await call(`${a.url}/v1/conversations/${conv.id}`, { token: me.token })).json.title).toBe('private thoughts');
  });

  it.runIf(mode.enabled)('refuses API keys and anonymous callers', async () => {
    const keyed = await call(`${a.url}/v1/conversations`, { token: 'sk-somekey', body: {} });
    expect(keyed.status).toBe(401);
    expect(keyed.json.error.code).toBe('user_credentials_required');
    expect((await call(`${a.url}/v1/conversations`)).status).toBe(401);
  });

  it.runIf(mode.enabled)('serves long conversations in pages of the latest messages, oldest first', async () => {
    const conv = await create({ title: 'long one' });
    const texts = Array.from({ length: 7 }, (_, i) => `message number ${i}`);
    const ids = await appendMessages(a, me, conv.id, texts.map((content, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content, model: i % 2 === 0 ? undefined : 'gpt-x', usage: i % 2 === 0 ? undefined : { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } })));
    const all = await call(`${b.url}/v1/conversations/${conv.id}`, { token: me.token });
    expect(all.json.message_count).toBe(7);
    expect(all.json.messages.map((m: { content: string }) => m.content)).toEqual(texts);
    expect(all.json.messages[1]).toMatchObject({ id: ids[1], object: 'conversation.message', role: 'assistant', model: 'gpt-x', finish_reason: 'stop', usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } });
    expect(all.json.last_message_at).toBeGreaterThan(0);

    const last3 = await call(`${b.url}/v1/conversations/${conv.id}?limit=3`, { token: me.token });
    expect(last3.json.messages.map((m: { id: string }) => m.id)).toEqual(ids.slice(4));
    expect(last3.json.has_more).toBe(true);
    const prev = await call(`${b.url}/v1/conversations/${conv.id}?limit=3&before=${ids[4]}`, { token: me.token });
    expect(prev.json.messages.map((m: { id: string }) => m.id)).toEqual(ids.slice(1, 4));
    expect(prev.json.has_more).toBe(true);
    const first = await call(`${b.url}/v1/conversations/${conv.id}?limit=3&before=${ids[1]}`, { token: me.token });
    expect(first.json.messages.map((m: { id: string }) => m.id)).toEqual(ids.slice(0, 1));
    expect(first.json.has_more).toBe(false);
    const unknown = await call(`${b.url}/v1/conversations/${conv.id}?before=msg_nope`, { token: me.token });
    expect(unknown.json.error.code).toBe('message_not_found');
  });

  it.runIf(mode.enabled)('lists own conversations by latest activity with an opaque cursor, archived and pinned filters', async () => {
    const user = await loggedInUser(a, 'user');
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await create({ title: `c${i}` }, user.token)).id);
    // Activity moves c1 to the top.
    await appendMessages(a, user, made[1]!, [{ role: 'user', content: 'hello again' }]);
    const expected = [made[1], made[4], made[3], made[2], made[0]];
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof call>> = await call(`${b.url}/v1/conversations?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token: user.token });
      expect(page.status, page.text).toBe(200);
      expect(page.json.object).toBe('list');
      expect(page.json.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.json.data.map((c: { id: string }) => c.id));
      cursor = page.json.next_cursor;
      expect(page.json.has_more).toBe(cursor !== null);
    } while (cursor !== null);
    expect(seen).toEqual(expected);
    expect((await call(`${b.url}/v1/conversations?cursor=bm9wZQ`, { token: user.token })).json.error.code).toBe('invalid_cursor');

    await call(`${a.url}/v1/conversations/${made[2]}`, { method: 'PATCH', token: user.token, body: { archived: true } });
    await call(`${a.url}/v1/conversations/${made[3]}`, { method: 'PATCH', token: user.token, body: { pinned: true } });
    const active = await call(`${b.url}/v1/conversations`, { token: user.token });
    // Pinning is not activity: the order stays; the UI asks for pinned=true to show those first.
    expect(active.json.data.map((c: { id: string }) => c.id)).toEqual([made[1], made[4], made[3], made[0]]);
    const archived = await call(`${b.url}/v1/conversations?archived=true`, { token: user.token });
    expect(archived.json.data.map((c: { id: string }) => c.id)).toEqual([made[2]]);
    const pinned = await call(`${b.url}/v1/conversations?pinned=true`, { token: user.token });
    expect(pinned.json.data.map((c: { id: string }) => c.id)).toEqual([made[3]]);
    expect(pinned.json.data[0]).not.toHaveProperty('system_prompt');
  });

  it.runIf(mode.enabled)('deletes: 404 afterwards, gone from lists, search and counts', async () => {
    const user = await loggedInUser(a, 'user', me.tenantId);
    const conv = await create({ title: 'to be forgotten' }, user.token);
    await appendMessages(a, user, conv.id, [{ role: 'user', content: 'forgettable words' }]);
    const del = await call(`${b.url}/v1/conversations/${conv.id}`, { method: 'DELETE', token: user.token });
    expect(del.status, del.text).toBe(200);
    expect(del.json).toEqual({ id: conv.id, object: 'conversation.deleted', deleted: true });
    expect((await call(`${a.url}/v1/conversations/${conv.id}`, { token: user.token })).status).toBe(404);
    expect((await call(`${a.url}/v1/conversations/${conv.id}`, { method: 'DELETE', token: user.token })).status).toBe(404);
    expect((await call(`${a.url}/v1/conversations`, { token: user.token })).json.data).toEqual([]);
    expect((await call(`${a.url}/v1/conversations/search?q=forgettable`, { token: user.token })).json.data).toEqual([]);
    const rows = await a.app.ctx.sql.db.selectFrom('conversations').selectAll().where('id', '=', conv.id).execute();
    expect(rows).toMatchObject([{ deleted: 1, title: null, search_title: null, system_prompt: null }]);
    expect(await a.app.ctx.sql.db.selectFrom('conversation_messages').selectAll().where('conversation_id', '=', conv.id).execute()).toEqual([]);
  });

  it.runIf(mode.enabled)('searches titles and current messages, ranked, with snippets around the match', async () => {
    const user = await loggedInUser(a, 'user');
    const titled = await create({ title: 'Sourdough starter notes' }, user.token);
    const chatty = await create({ title: 'Kitchen' }, user.token);
    await appendMessages(a, user, chatty.id, [
      { role: 'user', content: 'How do I feed a SOURDOUGH starter when the kitchen is cold? It has been sluggish for a week now.' },
      { role: 'assistant', content: 'Feed the sourdough starter twice a day with equal weights of flour and water.' },
    ]);
    const unrelated = await create({ title: 'Taxes' }, user.token);
    await appendMessages(a, user, unrelated.id, [{ role: 'user', content: 'sour dough is not the same words' }]);
    const res = await call(`${b.url}/v1/conversations/search?q=${encodeURIComponent('Sourdough starter')}`, { token: user.token });
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.map((c: { id: string }) => c.id)).toEqual([titled.id, chatty.id]);
    const [top, second] = res.json.data;
    expect(top.snippets[0]).toMatchObject({ field: 'title', message_id: null });
    expect(second.score).toBe(2);
    expect(second.snippets).toHaveLength(2);
    const snippet = second.snippets[1];
    expect(snippet).toMatchObject({ field: 'message', role: 'user' });
    const [start, end] = snippet.highlights[0];
    expect(snippet.text.slice(start, end).toLowerCase()).toBe('sourdough');
    // LIKE wildcards are plain characters here.
    expect((await call(`${b.url}/v1/conversations/search?q=%25`, { token: user.token })).json.data).toEqual([]);
    expect((await call(`${b.url}/v1/conversations/search?q=_`, { token: user.token })).json.data).toEqual([]);
  });

  it.runIf(mode.enabled)('syncs changes since a cursor, deletions as tombstones', async () => {
    const user = await loggedInUser(a, 'user');
    const one = await create({ title: 'one' }, user.token);
    const two = await create({ title: 'two' }, user.token);
    const full = await call(`${b.url}/v1/conversations/sync`, { token: user.token });
    expect(full.status, full.text).toBe(200);
    expect(full.json.changes.map((c: { id: string; op: string }) => [c.id, c.op])).toEqual([
      [one.id, 'created'],
      [two.id, 'created'],
    ]);
    const cursor = full.json.cursor as string;
    const nothing = await call(`${b.url}/v1/conversations/sync?since=${cursor}`, { token: user.token });
    expect(nothing.json).toMatchObject({ changes: [], cursor, has_more: false });

    await appendMessages(a, user, one.id, [{ role: 'user', content: 'news' }]);
    await call(`${a.url}/v1/conversations/${two.id}`, { method: 'DELETE', token: user.token });
    const three = await create({ title: 'three' }, user.token);
    const first = await call(`${b.url}/v1/conversations/sync?since=${cursor}&limit=2`, { token: user.token });
    expect(first.json.has_more).toBe(true);
    const rest = await call(`${b.url}/v1/conversations/sync?since=${first.json.cursor}&limit=2`, { token: user.token });
    expect(rest.json.has_more).toBe(false);
    const changes = [...first.json.changes, ...rest.json.changes];
    expect(changes.map((c: { id: string; op: string }) => [c.id, c.op])).toEqual([
      [one.id, 'updated'],
      [two.id, 'deleted'],
      [three.id, 'created'],
    ]);
    expect(changes[0].conversation.message_count).toBe(1);
    expect(changes[1]).toMatchObject({ conversation: null });
    expect(changes[1].deleted_at).toBeGreaterThan(0);
    // A full sync does not list what was deleted.
    const again = await call(`${b.url}/v1/conversations/sync`, { token: user.token });
    expect(again.json.changes.map((c: { id: string }) => c.id)).toEqual([one.id, three.id]);
  });

  it.runIf(mode.enabled)('exports as JSON and as Markdown, as downloads', async () => {
    const conv = await create({ title: 'Café plans', model: 'gpt-x', system_prompt: 'Be brief.' });
    await appendMessages(a, me, conv.id, [
      { role: 'user', content: 'Where should we meet?' },
      { role: 'assistant', content: 'At the **corner café**.', model: 'gpt-x' },
    ]);
    const json = await call(`${b.url}/v1/conversations/${conv.id}/export`, { token: me.token });
    expect(json.status, json.text).toBe(200);
    expect(json.headers.get('content-disposition')).toBe('attachment; filename="cafe-plans.json"');
    expect(json.json).toMatchObject({ id: conv.id, title: 'Café plans', system_prompt: 'Be brief.' });
    expect(json.json.messages.map((m: { content: string }) => m.content)).toEqual(['Where should we meet?', 'At the **corner café**.']);
    const md = await call(`${b.url}/v1/conversations/${conv.id}/export?format=markdown`, { token: me.token });
    expect(md.status).toBe(200);
    expect(md.headers.get('content-type')).toMatch(/^text\/markdown/);
    expect(md.headers.get('content-disposition')).toBe('attachment; filename="cafe-plans.md"');
    expect(md.text).toContain('# Café plans');
    expect(md.text).toContain('## User\n\nWhere should we meet?');
    expect(md.text).toContain('## Assistant (gpt-x)\n\nAt the **corner café**.');
  });

  it.runIf(mode.enabled)('admins see per-user counts, never a text', async () => {
    const tenantAdmin = await loggedInUser(a, 'admin');
    const user = await loggedInUser(a, 'user', tenantAdmin.tenantId);
    const conv = await create({ title: 'secret-title-for-counts' }, user.token);
    await appendMessages(a, user, conv.id, [
      { role: 'user', content: 'secret-message-for-counts' },
      { role: 'assistant', content: 'ok' },
    ]);
    await create({}, user.token);
    const res = await call(`${b.url}/v1/admin/conversations/counts`, { token: tenantAdmin.token });
    expect(res.status, res.text).toBe(200);
    expect(res.json.data).toEqual([{ user_id: user.userId, conversations: 2, archived: 0, messages: 2, last_activity_at: expect.any(Number) }]);
    expect(res.text).not.toContain('secret');
    // Operators may name the tenant; other admins may not name another.
    expect((await call(`${b.url}/v1/admin/conversations/counts?tenant_id=${tenantAdmin.tenantId}`, { token: a.adminToken })).json.data).toHaveLength(1);
    expect((await call(`${b.url}/v1/admin/conversations/counts?tenant_id=default`, { token: tenantAdmin.token })).json.error.code).toBe('tenant_not_allowed');
    expect((await call(`${b.url}/v1/admin/conversations/counts`, { token: user.token })).status).toBe(403);
  });

  it.runIf(mode.enabled)('is in the OpenAPI document', async () => {
    const doc = (await call(`${a.url}/openapi.json`)).json;
    for (const path of ['/v1/conversations', '/v1/conversations/{id}', '/v1/conversations/search', '/v1/conversations/sync', '/v1/conversations/{id}/export', '/v1/admin/conversations/counts']) {
      expect(doc.paths[path], path).toBeDefined();
    }
    expect(Object.keys(doc.paths['/v1/conversations/{id}']).sort()).toEqual(['delete', 'get', 'patch']);
  });
});
