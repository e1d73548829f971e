/**
 * Presets end to end on the real server: CRUD, validation, visibility across users and tenants,
 * clone, search (ranking, filters, pagination), sync across two devices, ETags, applying a preset
 * on the relay (asserting what the upstream received), and the built-in loader (versions, files
 * added later, bad files, reload). Built-ins here come from a temporary folder, so nothing depends
 * on the shipped data (test/unit/presets-builtin-data.test.ts checks that).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createUser, login, startApp, TEST_USER_PASSWORD, type RunningApp } from '../support/app.js';
import { dereferencedOpenapi } from '../support/openapi.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { builtinFile, writeBuiltin } from '../support/presets.js';
import { createChannel, usageEvents } from '../support/relay.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Actor {
  id: string;
  token: string;
}

describe('presets', () => {
  let s: RunningApp;
  let upstream: OpenAiFake;
  let builtinDir: string;
  let alice: Actor; // user-1, default tenant
  let bob: Actor; // default tenant
  let carol: Actor; // another tenant
  const dirs: string[] = [];

  const api = (path: string, token: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) => call(`${s.url}${path}`, { token, ...init });
  const create = async (token: string, body: Json) => {
    const res = await api('/api/presets', token, { body });
    expect(res.status, res.text).toBe(201);
    return res.json;
  };
  const newActor = async (tenantId?: string): Promise<Actor> => {
    const user = await createUser(s.url, s.adminToken, tenantId ? { tenant_id: tenantId } : {});
    return { id: user.id, token: (await login(s.url, user.email, TEST_USER_PASSWORD)).access_token };
  };
  const ids = (res: { json: Json }) => (res.json.data as Json[]).map((p) => p.id as string);

  beforeAll(async () => {
    builtinDir = mkdtempSync(join(tmpdir(), 'sy-builtin-'));
    dirs.push(builtinDir);
    writeBuiltin(builtinDir, 'en', builtinFile('test-en-helper', 1, { model_preferences: ['gpt-b'], temperature: 0.2, max_tokens: 300 }));
    writeBuiltin(builtinDir, 'cn', builtinFile('test-cn-helper', '1.0', { lang: 'cn', name: '测试助手', category: 'Education', tags: ['测试'] }));
    upstream = await startOpenAiFake();
    s = await startApp({ HEALTH_CHECK_ENABLED: 'false', PRESETS_BUILTIN_DIR: builtinDir });
    await createChannel(s, { type: 'openai', base_url: upstream.baseUrl, models: ['gpt-a', 'gpt-b'] });
    alice = { id: s.userId, token: s.userToken };
    bob = await newActor();
    const tenant = await call(`${s.url}/v1/admin/tenants`, { token: s.adminToken, body: { name: 'Other' } });
    carol = await newActor(tenant.json.id as string);
  });
  afterAll(async () => {
    await s?.close();
    await upstream?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('creates, reads, changes and deletes a preset (owner only)', async () => {
    const body = {
      name: '  Code reviewer ',
      description: 'Reviews diffs',
      avatar: '🧐',
      tags: ['code', 'review', 'Code'],
      category: 'Technical',
      context: [
        { role: 'user', content: 'Review: x = 1' },
        { role: 'assistant', content: 'Looks fine.' },
      ],
      public: false,
      model_preferences: ['gpt-a'],
      temperature: 0.2,
      max_tokens: 500,
      system_prompt: 'You review code.',
      visibility: 'private',
    };
    const created = await create(alice.token, body);
    expect(created).toEqual({
      id: expect.stringMatching(/^pst_/),
      object: 'preset',
      builtin: false,
      owner_id: alice.id,
      name: 'Code reviewer',
      description: 'Reviews diffs',
      avatar: '🧐',
      lang: null,
      category: 'Technical',
      tags: ['code', 'review'],
      context: body.context,
      public: false,
      visibility: 'private',
      model_preferences: ['gpt-a'],
      temperature: 0.2,
      max_tokens: 500,
      system_prompt: 'You review code.',
      version: null,
      revision: 1,
      cloned_from: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const id = created.id as string;
    expect((await api(`/api/presets/${id}`, alice.token)).json).toEqual(created);

    const patched = await api(`/api/presets/${id}`, alice.token, { method: 'PATCH', body: { name: 'Strict reviewer', public: true, temperature: null } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json).toMatchObject({ name: 'Strict reviewer', visibility: 'public', public: true, temperature: null, revision: 2, description: 'Reviews diffs' });
    // Nothing changed: no event, same revision.
    expect((await api(`/api/presets/${id}`, alice.token, { method: 'PATCH', body: { name: 'Strict reviewer' } })).json.revision).toBe(2);

    // Others: may read a public preset, never change or delete it (404, as if missing).
    expect((await api(`/api/presets/${id}`, bob.token)).status).toBe(200);
    for (const [method, body] of [['PATCH', { name: 'mine now' }], ['DELETE', undefined]] as const) {
      const res = await api(`/api/presets/${id}`, bob.token, { method, body });
      expect(res.status).toBe(404);
      expect(res.json.error.code).toBe('preset_not_found');
    }

    expect((await api(`/api/presets/${id}`, alice.token, { method: 'DELETE' })).json).toEqual({ id, object: 'preset', deleted: true });
    expect((await api(`/api/presets/${id}`, alice.token)).status).toBe(404);
    expect((await api(`/api/presets/${id}`, alice.token, { method: 'DELETE' })).status).toBe(404);
    const events = await s.app.ctx.store.readStream(`preset-${id}`);
    expect(events.map((e) => e.type)).toEqual(['PresetCreated', 'PresetUpdated', 'PresetDeleted']);
    expect(events.every((e) => e.tenant_id === 'default')).toBe(true);
  });

  it('answers clear 400s for invalid presets', async () => {
    const cases: Array<[Json, string]> = [
      [{ name: '' }, 'name'],
      [{ name: '   ' }, 'name'],
      [{ name: 'x', context: [{ role: 'wizard', content: 'hi' }] }, 'context.0.role'],
      [{ name: 'x', context: [{ role: 'user', content: '' }] }, 'context.0.content'],
      [{ name: 'x', category: 'Astrology' }, 'category'],
      [{ name: 'x', temperature: 3 }, 'temperature'],
      [{ name: 'x', visibility: 'secret' }, 'visibility'],
      [{ name: 'x', tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, 'tags'],
    ];
    for (const [body, param] of cases) {
      const res = await api('/api/presets', alice.token, { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error.param, JSON.stringify(body)).toBe(param);
      expect(res.json.error.type).toBe('invalid_request_error');
    }
    const tooMany = await api('/api/presets', alice.token, { body: { name: 'x', context: Array.from({ length: 101 }, () => ({ role: 'user', content: 'hi' })) } });
    expect(tooMany.status).toBe(400);
    expect(tooMany.json.error).toMatchObject({ code: 'context_too_large', param: 'context' });
    const tooLong = await api('/api/presets', alice.token, { body: { name: 'x', system_prompt: 'a'.repeat(60_000), context: [{ role: 'user', content: 'b'.repeat(40_001) }] } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.json.error.code).toBe('context_too_large');
    const contradiction = await api('/api/presets', alice.token, { body: { name: 'x', public: true, visibility: 'team' } });
    expect(contradiction.status).toBe(400);
    const created = await create(alice.token, { name: 'valid' });
    const badPatch = await api(`/api/presets/${created.id}`, alice.token, { method: 'PATCH', body: { context: [{ role: 'tool', content: 'x' }] } });
    expect(badPatch.status).toBe(400);
    expect((await api('/api/presets/search?category=Astrology', alice.token)).status).toBe(400);
    expect((await api('/api/presets/sync?since=abc', alice.token)).status).toBe(400);
    expect((await call(`${s.url}/api/presets`)).status).toBe(401);
  });

  it("takes the spec's nested body beside the flat one, answers in the flat shape, and refuses a field given in both", async () => {
    const nested = {
      metadata: { name: 'Nested reviewer', description: 'Reviews diffs', avatar: '🧐', tags: ['code'], category: 'Technical' },
      configuration: { model_preferences: ['gpt-a'], temperature: 0.3, max_tokens: 400, system_prompt: 'You review code.' },
      context: [{ role: 'user', content: 'Review: x = 1' }],
    };
    const created = await create(alice.token, nested);
    const flat = await create(alice.token, { ...nested.metadata, ...nested.configuration, context: nested.context });
    const shape = (p: Json) => {
      const { id: _id, created_at: _c, updated_at: _u, ...rest } = p;
      return rest;
    };
    expect(shape(created)).toEqual(shape(flat));
    expect(created).toMatchObject({ name: 'Nested reviewer', category: 'Technical', model_preferences: ['gpt-a'], temperature: 0.3, max_tokens: 400, system_prompt: 'You review code.', visibility: 'private' });
    expect(created).not.toHaveProperty('metadata');
    expect(created).not.toHaveProperty('configuration');

    // The forms mix for different fields; a change names only what it changes.
    const patched = await api(`/api/presets/${created.id}`, alice.token, { method: 'PATCH', body: { metadata: { description: 'Strict' }, configuration: { temperature: null }, max_tokens: 100 } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json).toMatchObject({ name: 'Nested reviewer', description: 'Strict', temperature: null, max_tokens: 100, system_prompt: 'You review code.', revision: 2 });
    const mixedDifferent = await create(alice.token, { name: 'Mixed', configuration: { temperature: 1 } });
    expect(mixedDifferent).toMatchObject({ name: 'Mixed', temperature: 1 });

    // The same field in both forms, or nested values that are invalid: a 400 naming the field.
    const both = 'is given both as';
    const refusals: Array<[string, Json, string, string]> = [
      ['POST', { name: 'a', metadata: { name: 'b' } }, 'metadata.name', `name ${both} "name" and as "metadata.name"`],
      ['POST', { metadata: { name: 'a' }, configuration: { temperature: 0.5 }, temperature: 0.5 }, 'configuration.temperature', both],
      ['POST', { metadata: { description: 'no name' } }, 'name', 'needs a name'],
      ['POST', { metadata: { name: 'x', category: 'Astrology' } }, 'metadata.category', 'metadata.category'],
      ['POST', { metadata: { name: 'x' }, configuration: { temperature: 3 } }, 'configuration.temperature', 'configuration.temperature'],
      ['PATCH', { system_prompt: 'a', configuration: { system_prompt: 'b' } }, 'configuration.system_prompt', both],
      ['PATCH', { tags: [], metadata: { tags: ['x'] } }, 'metadata.tags', both],
    ];
    for (const [method, body, param, message] of refusals) {
      const res = await api(method === 'POST' ? '/api/presets' : `/api/presets/${created.id}`, alice.token, { method, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error, JSON.stringify(body)).toMatchObject({ type: 'invalid_request_error', param });
      expect(res.json.error.message, JSON.stringify(body)).toContain(message);
    }
    expect((await api(`/api/presets/${created.id}`, alice.token)).json.revision).toBe(2);
  });

  it('shows private presets to the owner, team presets to the tenant and public ones to everyone', async () => {
    const priv = await create(alice.token, { name: 'vis private', visibility: 'private' });
    const team = await create(alice.token, { name: 'vis team', visibility: 'team' });
    const pub = await create(alice.token, { name: 'vis public', public: true });
    expect(pub.visibility).toBe('public');
    const sees = async (actor: Actor) => {
      const out: string[] = [];
      for (const p of [priv, team, pub]) if ((await api(`/api/presets/${p.id}`, actor.token)).status === 200) out.push(p.name as string);
      return out;
    };
    expect(await sees(alice)).toEqual(['vis private', 'vis team', 'vis public']);
    expect(await sees(bob)).toEqual(['vis team', 'vis public']);
    expect(await sees(carol)).toEqual(['vis public']);
    const hidden = await api(`/api/presets/${team.id}`, carol.token);
    expect(hidden.status).toBe(404);
    expect(hidden.json.error.code).toBe('preset_not_found');

    // The user's presets: all of one's own; of others, what they share with the caller.
    const names = async (actor: Actor, user: string) => ((await api(`/api/presets/user/${user}?q=vis&limit=100`, actor.token)).json.data as Json[]).map((p) => p.name).sort();
    expect(await names(alice, 'me')).toEqual(['vis private', 'vis public', 'vis team']);
    expect(await names(alice, alice.id)).toEqual(['vis private', 'vis public', 'vis team']);
    expect(await names(bob, alice.id)).toEqual(['vis public', 'vis team']);
    expect(await names(carol, alice.id)).toEqual(['vis public']);

    // Search and lists honour the same rules.
    const search = async (actor: Actor) => ((await api('/api/presets/search?q=vis', actor.token)).json.data as Json[]).map((p) => p.name).sort();
    expect(await search(bob)).toEqual(['vis public', 'vis team']);
    expect(await search(carol)).toEqual(['vis public']);
    const shared = await api('/api/presets?scope=shared&q=vis', bob.token);
    expect(ids(shared).sort()).toEqual([team.id, pub.id].sort());
    const mine = await api('/api/presets?scope=mine&q=vis', alice.token);
    expect(ids(mine).sort()).toEqual([priv.id, team.id, pub.id].sort());

    // Making it private again hides it at once.
    await api(`/api/presets/${pub.id}`, alice.token, { method: 'PATCH', body: { public: false } });
    expect((await api(`/api/presets/${pub.id}`, carol.token)).status).toBe(404);
    expect((await api(`/api/presets/${pub.id}`, bob.token)).status).toBe(404);
  });

  it('serves built-ins to everyone, read-only, and clones them', async () => {
    for (const actor of [alice, bob, carol]) {
      const res = await api('/api/presets?scope=builtin&limit=100', actor.token);
      expect(ids(res)).toEqual(expect.arrayContaining(['test-en-helper', 'test-cn-helper']));
    }
    const builtin = (await api('/api/presets/test-en-helper', carol.token)).json;
    expect(builtin).toMatchObject({ id: 'test-en-helper', builtin: true, owner_id: null, version: '1', lang: 'en', category: 'Technical', visibility: 'public', public: true, temperature: 0.2, max_tokens: 300 });
    expect((await api('/api/presets/test-cn-helper', carol.token)).json).toMatchObject({ name: '测试助手', lang: 'cn', version: '1.0' });
    const cnOnly = await api('/api/presets?scope=builtin&lang=cn&limit=100', carol.token);
    expect(ids(cnOnly)).toContain('test-cn-helper');
    expect(ids(cnOnly)).not.toContain('test-en-helper');

    const edit = await api('/api/presets/test-en-helper', alice.token, { method: 'PATCH', body: { name: 'hacked' } });
    expect(edit.status).toBe(403);
    expect(edit.json.error.code).toBe('preset_read_only');
    expect((await api('/api/presets/test-en-helper', alice.token, { method: 'DELETE' })).status).toBe(403);

    const addition = { role: 'user', content: 'And keep it short.' };
    const clone = await api('/api/presets/test-en-helper/clone', carol.token, { body: { modifications: { name: 'My helper', context_additions: [addition] } } });
    expect(clone.status, clone.text).toBe(201);
    expect(clone.json).toMatchObject({ builtin: false, owner_id: carol.id, name: 'My helper', visibility: 'private', cloned_from: 'test-en-helper', temperature: 0.2, max_tokens: 300, model_preferences: ['gpt-b'], lang: 'en' });
    expect(clone.json.context).toEqual([...builtin.context, addition]);
    // The clone is the caller's: editable, and in the caller's tenant.
    expect((await api(`/api/presets/${clone.json.id}`, carol.token, { method: 'PATCH', body: { name: 'Renamed' } })).json.name).toBe('Renamed');
    expect((await s.app.ctx.store.readStream(`preset-${clone.json.id}`))[0]!.tenant_id).not.toBe('default');
    expect((await api(`/api/presets/${clone.json.id}`, alice.token)).status).toBe(404);
  });

  it("clones another user's public preset, not a private one", async () => {
    const pub = await create(alice.token, { name: 'Shared template', visibility: 'public', context: [{ role: 'user', content: 'template' }], tags: ['x'] });
    const priv = await create(alice.token, { name: 'Secret template', visibility: 'private' });
    const team = await create(alice.token, { name: 'Team template', visibility: 'team' });
    const fromOtherTenant = await api(`/api/presets/${pub.id}/clone`, carol.token, { body: {} });
    expect(fromOtherTenant.status).toBe(201);
    expect(fromOtherTenant.json).toMatchObject({ name: 'Shared template', owner_id: carol.id, visibility: 'private', cloned_from: pub.id, context: pub.context, tags: ['x'] });
    expect((await api(`/api/presets/${team.id}/clone`, bob.token, { body: {} })).status).toBe(201);
    for (const [actor, preset] of [
      [bob, priv],
      [carol, priv],
      [carol, team],
    ] as const) {
      const res = await api(`/api/presets/${preset.id}/clone`, actor.token, { body: {} });
      expect(res.status).toBe(404);
      expect(res.json.error.code).toBe('preset_not_found');
    }
    expect((await api('/api/presets/nope/clone', bob.token, { body: {} })).status).toBe(404);
  });

  it('ranks search results name > tag > description > context, filters and paginates', async () => {
    const word = `qx${Date.now().toString(36)}`;
    const inContext = await create(bob.token, { name: 'Alpha', context: [{ role: 'user', content: `something about ${word} here` }], category: 'Legal', visibility: 'team' });
    const inDescription = await create(bob.token, { name: 'Bravo', description: `all about ${word}`, category: 'Legal', visibility: 'team' });
    const inTag = await create(bob.token, { name: 'Charlie', tags: [word, 'law'], category: 'Legal', visibility: 'team' });
    const inName = await create(bob.token, { name: `The ${word} expert`, category: 'Business', tags: ['law'], visibility: 'team' });
    const exact = await create(bob.token, { name: word, category: 'business', visibility: 'team' });
    const inSystemPrompt = await create(bob.token, { name: 'Delta', system_prompt: `Talk like ${word}.`, visibility: 'team' });
    const other = await create(bob.token, { name: 'Unrelated', description: 'nothing', visibility: 'team' });

    const res = await api(`/api/presets/search?q=${word.toUpperCase()}`, alice.token);
    expect(res.status).toBe(200);
    // Context and system prompt score alike: the tie goes by name (Alpha, Delta).
    expect(ids(res)).toEqual([exact.id, inName.id, inTag.id, inDescription.id, inContext.id, inSystemPrompt.id]);
    const scores = (res.json.data as Json[]).map((p) => p.score as number);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(scores[0]).toBeGreaterThan(scores[1]!);
    expect(res.json).toMatchObject({ object: 'list', total: 6, limit: 20, offset: 0, next_offset: null });
    expect(ids(res)).not.toContain(other.id);

    // Every term must match; the phrase in the name ranks first.
    const two = await api(`/api/presets/search?q=${encodeURIComponent(`${word} expert`)}`, alice.token);
    expect(ids(two)).toEqual([inName.id]);

    // Filters: category (case-insensitive), tags (all of them), together with q.
    const legal = await api(`/api/presets/search?q=${word}&category=legal`, alice.token);
    expect(ids(legal)).toEqual([inTag.id, inDescription.id, inContext.id]);
    const business = await api(`/api/presets/search?q=${word}&category=Business`, alice.token);
    expect(ids(business).sort()).toEqual([exact.id, inName.id].sort());
    const tagged = await api(`/api/presets/search?q=${word}&tags=LAW`, alice.token);
    expect(ids(tagged)).toEqual([inName.id, inTag.id]);
    expect(ids(await api(`/api/presets/search?q=${word}&tags=law,${word}`, alice.token))).toEqual([inTag.id]);
    expect(ids(await api(`/api/presets/search?tags=${word}`, alice.token))).toEqual([inTag.id]);

    // Pagination: limit + offset, next_offset until the last page.
    const page1 = await api(`/api/presets/search?q=${word}&limit=4`, alice.token);
    expect(page1.json).toMatchObject({ total: 6, limit: 4, offset: 0, next_offset: 4 });
    const page2 = await api(`/api/presets/search?q=${word}&limit=4&offset=4`, alice.token);
    expect(page2.json).toMatchObject({ total: 6, offset: 4, next_offset: null });
    expect([...ids(page1), ...ids(page2)]).toEqual(ids(res));

    // Tenant-scoped: team presets are not found from another tenant; LIKE wildcards are literal.
    expect((await api(`/api/presets/search?q=${word}`, carol.token)).json.total).toBe(0);
    expect((await api(`/api/presets/search?q=${word}%25`, alice.token)).json.total).toBe(0);
    expect((await api(`/api/presets/search?q=${word.slice(0, 2)}_${word.slice(3)}`, alice.token)).json.total).toBe(0);
  });

  it('syncs two devices: changes and deletions since a cursor', async () => {
    const dave = await newActor();
    const deviceA = { token: dave.token, cursor: '0', presets: new Map<string, Json>() };
    const deviceB = { token: (await login(s.url, (await s.app.ctx.queries.user(null, dave.id))!.email, TEST_USER_PASSWORD)).access_token, cursor: '0', presets: new Map<string, Json>() };
    const sync = async (device: typeof deviceA, limit = 100) => {
      let more = true;
      const seen: Json[] = [];
      while (more) {
        const res = await api(`/api/presets/sync?since=${device.cursor}&limit=${limit}`, device.token);
        expect(res.status, res.text).toBe(200);
        for (const change of res.json.changes as Json[]) {
          seen.push(change);
          if (change.op === 'deleted') device.presets.delete(change.id);
          else device.presets.set(change.id, change.preset);
        }
        device.cursor = res.json.cursor;
        more = res.json.has_more;
      }
      return seen;
    };

    const first = await create(dave.token, { name: 'one' });
    const second = await create(dave.token, { name: 'two' });
    await create(alice.token, { name: 'not daves' });
    expect((await sync(deviceA)).map((c) => [c.op, c.id])).toEqual([
      ['created', first.id],
      ['created', second.id],
    ]);
    expect((await sync(deviceB, 1)).length).toBe(2); // one page at a time

    // Device A edits and deletes; B catches up from its cursor.
    await api(`/api/presets/${first.id}`, deviceA.token, { method: 'PATCH', body: { name: 'one (edited)' } });
    await api(`/api/presets/${second.id}`, deviceA.token, { method: 'DELETE' });
    const third = await create(deviceA.token, { name: 'three' });
    const changes = await sync(deviceB);
    expect(changes.map((c) => [c.op, c.id])).toEqual([
      ['updated', first.id],
      ['deleted', second.id],
      ['created', third.id],
    ]);
    expect(changes[1]).toMatchObject({ preset: null, deleted_at: expect.any(String) });
    await sync(deviceA);
    expect(deviceB.presets).toEqual(deviceA.presets);
    expect([...deviceB.presets.values()].map((p) => p.name).sort()).toEqual(['one (edited)', 'three']);
    expect(deviceB.cursor).toBe(deviceA.cursor);

    // Nothing new: no changes, same cursor. A full sync (no since) has no tombstones.
    const cursor = deviceB.cursor;
    expect(await sync(deviceB)).toEqual([]);
    expect(deviceB.cursor).toBe(cursor);
    const full = await api('/api/presets/sync', dave.token);
    expect((full.json.changes as Json[]).map((c) => c.op)).toEqual(['created', 'created']);
  });

  it('answers 304 on If-None-Match and 412 on a stale If-Match', async () => {
    const preset = await create(alice.token, { name: 'etag' });
    const first = await api(`/api/presets/${preset.id}`, alice.token);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const again = await api(`/api/presets/${preset.id}`, alice.token, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    expect((await api(`/api/presets/${preset.id}`, alice.token, { headers: { 'if-none-match': `W/${etag}, "other"` } })).status).toBe(304);

    const patched = await api(`/api/presets/${preset.id}`, alice.token, { method: 'PATCH', body: { description: 'changed' }, headers: { 'if-match': etag } });
    expect(patched.status).toBe(200);
    const newEtag = patched.headers.get('etag')!;
    expect(newEtag).not.toBe(etag);
    const changed = await api(`/api/presets/${preset.id}`, alice.token, { headers: { 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).toBe(newEtag);

    const stale = await api(`/api/presets/${preset.id}`, alice.token, { method: 'PATCH', body: { description: 'lost update' }, headers: { 'if-match': etag } });
    expect(stale.status).toBe(412);
    expect(stale.json.error.code).toBe('precondition_failed');
    expect((await api(`/api/presets/${preset.id}`, alice.token, { method: 'DELETE', headers: { 'if-match': etag } })).status).toBe(412);
    expect((await api(`/api/presets/${preset.id}`, alice.token, { method: 'DELETE', headers: { 'if-match': newEtag } })).status).toBe(200);
  });

  describe('on the relay', () => {
    const chat = (token: string, body: Json) => call(`${s.url}/v1/chat/completions`, { token, body });
    const received = () => upstream.requests.at(-1)!.json as Json;

    it("prepends the preset's context and fills what the request left unset", async () => {
      const preset = await create(alice.token, {
        name: 'relay preset',
        system_prompt: 'You are terse.',
        context: [
          { role: 'user', content: 'Example Q' },
          { role: 'assistant', content: 'Example A' },
        ],
        model_preferences: ['not-served-anywhere', 'gpt-b'],
        temperature: 0.3,
        max_tokens: 77,
      });
      const res = await chat(alice.token, { preset_id: preset.id, messages: [{ role: 'user', content: 'Real question' }] });
      expect(res.status, res.text).toBe(200);
      expect(received()).toMatchObject({
        model: 'gpt-b',
        temperature: 0.3,
        max_tokens: 77,
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: 'Example Q' },
          { role: 'assistant', content: 'Example A' },
          { role: 'user', content: 'Real question' },
        ],
      });
      expect(received()).not.toHaveProperty('preset_id');

      // What the request sets wins; its own system message replaces the preset's system prompt.
      const own = await chat(alice.token, { model: 'gpt-a', preset_id: preset.id, temperature: 1, max_completion_tokens: 10, messages: [{ role: 'system', content: 'Mine' }, { role: 'user', content: 'Q' }] });
      expect(own.status, own.text).toBe(200);
      expect(received()).toMatchObject({ model: 'gpt-a', temperature: 1, max_completion_tokens: 10 });
      expect(received()).not.toHaveProperty('max_tokens');
      expect((received().messages as Json[]).map((m) => m.content)).toEqual(['Example Q', 'Example A', 'Mine', 'Q']);
    });

    it('applies built-ins and presets shared with the caller, also with an API key', async () => {
      const res = await chat(bob.token, { preset_id: 'test-en-helper', messages: [{ role: 'user', content: 'Hi' }] });
      expect(res.status, res.text).toBe(200);
      expect(received()).toMatchObject({ model: 'gpt-b', temperature: 0.2, max_tokens: 300 });
      expect((received().messages as Json[])[0]).toEqual({ role: 'system', content: 'You are the test-en-helper test assistant.' });

      const team = await create(bob.token, { name: 'team relay', visibility: 'team', context: [{ role: 'user', content: 'From the team' }] });
      const key = await call(`${s.url}/v1/keys`, { token: alice.token, body: { name: 'preset key' } });
      expect(key.status).toBe(201);
      const viaKey = await chat(key.json.key, { model: 'gpt-a', preset_id: team.id, messages: [{ role: 'user', content: 'Hi' }] });
      expect(viaKey.status, viaKey.text).toBe(200);
      expect((received().messages as Json[])[0]).toEqual({ role: 'user', content: 'From the team' });
    });

    it('answers 404 preset_not_found for unknown and invisible presets, and records the request', async () => {
      const priv = await create(alice.token, { name: 'private relay' });
      const before = upstream.requests.length;
      for (const [token, presetId] of [
        [alice.token, 'pst_does_not_exist'],
        [bob.token, priv.id],
        [carol.token, priv.id],
      ] as const) {
        const res = await chat(token, { model: 'gpt-a', preset_id: presetId, messages: [{ role: 'user', content: 'Hi' }] });
        expect(res.status).toBe(404);
        expect(res.json.error).toMatchObject({ code: 'preset_not_found', type: 'not_found_error' });
      }
      expect(upstream.requests.length).toBe(before);
      const missing = await chat(alice.token, { preset_id: 'pst_x', messages: [{ role: 'user', content: 'no model either' }] });
      expect(missing.json.error.code).toBe('preset_not_found');
      const usage = (await usageEvents(s)).filter((u) => u.error_code === 'preset_not_found');
      expect(usage.length).toBe(4);
      // A preset without model preferences cannot stand in for a missing model.
      const noModel = await chat(alice.token, { preset_id: priv.id, messages: [{ role: 'user', content: 'Hi' }] });
      expect(noModel.status).toBe(400);
      expect(noModel.json.error.param).toBe('model');
      expect((await chat(alice.token, { model: 'gpt-a', preset_id: 42, messages: [{ role: 'user', content: 'Hi' }] })).status).toBe(400);
    });
  });

  it('publishes every shape in the OpenAPI document', async () => {
    const paths = (await dereferencedOpenapi(s.url)).paths as Json;
    for (const path of ['/api/presets', '/api/presets/search', '/api/presets/sync', '/api/presets/user/{user_id}', '/api/presets/{preset_id}', '/api/presets/{preset_id}/clone', '/api/admin/presets/reload']) {
      expect(paths, path).toHaveProperty([path]);
    }
    // Both forms of the body: flat fields and the spec's metadata / configuration groups.
    for (const [path, method] of [['/api/presets', 'post'], ['/api/presets/{preset_id}', 'patch']] as const) {
      const properties = paths[path][method].requestBody.content['application/json'].schema.properties as Json;
      expect(Object.keys(properties), path).toEqual(expect.arrayContaining(['name', 'temperature', 'context', 'metadata', 'configuration']));
      expect(Object.keys(properties.metadata.properties)).toEqual(['name', 'description', 'avatar', 'tags', 'category']);
      expect(Object.keys(properties.configuration.properties)).toEqual(['model_preferences', 'temperature', 'max_tokens', 'system_prompt']);
    }
    expect(Object.keys(paths['/api/presets/{preset_id}'].get.responses['200'].content['application/json'].schema.properties)).toEqual(expect.arrayContaining(['id', 'context', 'visibility', 'builtin']));
    expect(paths['/api/presets/sync'].get.parameters.map((p: Json) => p.name)).toEqual(expect.arrayContaining(['since', 'limit']));
    expect(paths['/v1/chat/completions'].post.requestBody.content['application/json'].schema.properties).toHaveProperty('preset_id');
  });
});

describe('presets across restarts (built-in loader, RBAC)', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const temp = (prefix: string) => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };

  it('publishes newer versions to an existing installation, picks up added files and skips bad ones', async () => {
    const builtinDir = temp('sy-builtin-v-');
    const dataDir = temp('sy-data-v-');
    writeBuiltin(builtinDir, 'en', builtinFile('test-versioned', 1, { name: 'Version one' }));
    let s = await startApp({ PRESETS_BUILTIN_DIR: builtinDir }, { keepDataDir: dataDir });
    try {
      expect((await call(`${s.url}/api/presets/test-versioned`, { token: s.userToken })).json).toMatchObject({ name: 'Version one', version: '1', revision: 1 });
    } finally {
      await s.close();
    }

    // An update of the data (newer version), a new file, an older-version copy, and bad files.
    writeBuiltin(builtinDir, 'en', builtinFile('test-versioned', 2, { name: 'Version two' }));
    writeBuiltin(builtinDir, 'cn', builtinFile('test-added', 1, { lang: 'cn' }));
    writeFileSync(join(builtinDir, 'en', 'broken.json'), '{ not json');
    writeBuiltin(builtinDir, 'en', { ...builtinFile('test-invalid', 1), category: 'Astrology' });
    writeFileSync(join(builtinDir, 'en', 'zz-duplicate.json'), JSON.stringify(builtinFile('test-versioned', 9, { name: 'Duplicate' })));
    s = await startApp({ PRESETS_BUILTIN_DIR: builtinDir }, { keepDataDir: dataDir });
    try {
      expect((await call(`${s.url}/api/presets/test-versioned`, { token: s.userToken })).json).toMatchObject({ name: 'Version two', version: '2', revision: 2 });
      expect((await call(`${s.url}/api/presets/test-added`, { token: s.userToken })).status).toBe(200);
      expect((await call(`${s.url}/api/presets/test-invalid`, { token: s.userToken })).status).toBe(404);

      // Same data again (or an older version): nothing is published.
      const head = await s.app.ctx.store.headPosition();
      writeBuiltin(builtinDir, 'en', builtinFile('test-versioned', 1, { name: 'Older' }));
      const reload = await call(`${s.url}/api/admin/presets/reload`, { method: 'POST', token: s.adminToken });
      expect(reload.status).toBe(200);
      expect(reload.json.published).toEqual([]);
      expect(reload.json.problems.map((p: Json) => p.file).sort()).toEqual([join('en', 'broken.json'), join('en', 'test-invalid.json'), join('en', 'zz-duplicate.json')]);
      expect(await s.app.ctx.store.headPosition()).toBe(head);

      // A file added while running: published by a reload (operators only).
      writeBuiltin(builtinDir, 'en', builtinFile('test-live', 1));
      expect((await call(`${s.url}/api/admin/presets/reload`, { method: 'POST', token: s.userToken })).status).toBe(403);
      const live = await call(`${s.url}/api/admin/presets/reload`, { method: 'POST', token: s.adminToken });
      expect(live.json.published).toEqual(['test-live']);
      expect((await call(`${s.url}/api/presets/test-live`, { token: s.userToken })).status).toBe(200);

      const events = (await s.app.ctx.store.readStream('builtinpresets-catalog')).map((e) => `${e.data.preset_id as string}@${e.data.version as string}`);
      expect(events).toEqual(['test-versioned@1', 'test-added@1', 'test-versioned@2', 'test-live@1']);
    } finally {
      await s.close();
    }
  });

  it('needs presets:read to read and presets:write to write (RBAC)', async () => {
    const dataDir = temp('sy-data-rbac-');
    const env = { PRESETS_BUILTIN_DIR: temp('sy-builtin-rbac-') };
    let s = await startApp(env, { keepDataDir: dataDir });
    const created = await call(`${s.url}/api/presets`, { token: s.userToken, body: { name: 'before' } });
    expect(created.status).toBe(201);
    // Take presets:write away from the user role (roles are read at startup).
    await s.app.ctx.sql.db.deleteFrom('permissions').where('role', '=', 'user').where('permission', '=', 'presets:write').execute();
    await s.close();
    s = await startApp(env, { keepDataDir: dataDir });
    try {
      expect((await call(`${s.url}/api/presets/${created.json.id}`, { token: s.userToken })).status).toBe(200);
      expect((await call(`${s.url}/api/presets/search`, { token: s.userToken })).status).toBe(200);
      for (const [method, path, body] of [
        ['POST', '/api/presets', { name: 'after' }],
        ['PATCH', `/api/presets/${created.json.id}`, { name: 'after' }],
        ['DELETE', `/api/presets/${created.json.id}`, undefined],
        ['POST', `/api/presets/${created.json.id}/clone`, {}],
      ] as const) {
        const res = await call(`${s.url}${path}`, { method, token: s.userToken, body });
        expect(res.status, `${method} ${path}`).toBe(403);
        expect(res.json.error.message).toContain('presets:write');
      }
      await s.app.ctx.sql.db.deleteFrom('permissions').where('role', '=', 'user').where('permission', '=', 'presets:read').execute();
    } finally {
      await s.close();
    }
    s = await startApp(env, { keepDataDir: dataDir });
    try {
      for (const path of [`/api/presets/${created.json.id}`, '/api/presets', '/api/presets/search', '/api/presets/sync', '/api/presets/user/me']) {
        expect((await call(`${s.url}${path}`, { token: s.userToken })).status, path).toBe(403);
      }
      expect((await call(`${s.url}/api/presets/${created.json.id}`, { token: s.adminToken })).status).toBe(404); // private to user-1
    } finally {
      await s.close();
    }
  });

  it('starts with an empty or missing folder', async () => {
    for (const dir of [temp('sy-builtin-empty-'), join(tmpdir(), 'sy-does-not-exist-presets')]) {
      const s = await startApp({ PRESETS_BUILTIN_DIR: dir });
      try {
        const res = await call(`${s.url}/api/presets?scope=builtin`, { token: s.userToken });
        expect(res.status).toBe(200);
        expect(res.json.total).toBe(0);
      } finally {
        await s.close();
      }
    }
  });
});
