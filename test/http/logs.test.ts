/**
 * The searchable log index end to end (issue 19), on the real server, embedded and distributed
 * (two instances on NATS + MariaDB + Redis): process entries published on instance A through the
 * hub and its batcher, entries the logs projection derives from events (a key created, a relay
 * request failing upstream), all searched, paged and exported from instance B; levels, wildcards,
 * full text, tenant isolation, every export format parsed back, and a rebuild of the projection.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { LogEntry, LogLevel } from '../../src/logs/entry.js';
import { call, loggedInUser, startApp, type RunningApp } from '../support/app.js';
import { dereferencedOpenapi } from '../support/openapi.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { appModes, type ModeEnv } from '../support/modes.js';

const services = inject('services');
const urls = inject('serviceUrls');

/** RFC 4180 records (quoted fields, doubled quotes, CRLF), for reading exports back. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i++;
    } else field += c;
  }
  if (field !== '' || record.length > 0) records.push([...record, field]);
  return records;
}

for (const mode of appModes(services, urls)) {
  describe.skipIf(!mode.enabled)(`log search and export (${mode.name})`, () => {
    let env: ModeEnv;
    let a: RunningApp;
    /** The other instance (distributed), or the same one (embedded). */
    let b: RunningApp;
    let upstream: OpenAiFake;
    let tenantX: { tenantId: string; userId: string; token: string };
    let tenantY: { tenantId: string; userId: string; token: string };
    /** A word no other entry holds, so each run finds only its own entries. */
    const marker = `mk${randomBytes(5).toString('hex')}`;
    const base = Date.parse('2026-03-10T12:00:00.000Z');
    const at = (minutes: number) => new Date(base + minutes * 60_000).toISOString();

    const entry = (over: Partial<LogEntry> & { message: string }): LogEntry => ({
      id: `t-${randomUUID()}`,
      timestamp: at(0),
      level: 'INFO',
      category: 'application',
      component: 'relay',
      event: 'test',
      details: {},
      instance: 'instance-a',
      ...over,
    });

    /** Publishes on A's hub (as A's logger would) and waits for its batcher to write them. */
    const publish = async (entries: LogEntry[]) => {
      for (const e of entries) a.app.ctx.logs.hub.publish(e);
      await a.app.ctx.logs.index.flush();
    };
    const search = (token: string, body: unknown, on: RunningApp = b) => call(`${on.url}/api/admin/logs/search`, { token, body });
    const ids = (res: { json: Record<string, any> }) => (res.json.data as LogEntry[]).map((e) => e.id); // eslint-disable-line @typescript-eslint/no-explicit-any

    beforeAll(async () => {
      env = mode.env();
      a = await startApp(env.env);
      b = mode.name === 'distributed' ? await startApp(env.env) : a;
      upstream = await startOpenAiFake();
      tenantX = await loggedInUser(a, 'admin');
      tenantY = await loggedInUser(a, 'admin');
    });

    afterAll(async () => {
      await upstream?.close();
      if (b && b !== a) await b.close();
      await a?.close();
      await env?.cleanup();
    });

    it('finds a process entry written on A from B, by full text in message and details, with prefixes and keywords', async () => {
      const written = [
        entry({ message: `${marker} database connection refused`, component: 'database', level: 'ERROR', category: 'system', details: { host: 'db-primary', attempt: 3 } }),
        entry({ message: `${marker} cache warm`, component: 'cache', details: { note: 'connection pool resized' } }),
        entry({ message: `${marker} unrelated`, component: 'bus' }),
      ];
      await publish(written);
      const byText = await search(b.adminToken, { query: `${marker} connection` });
      expect(byText.status).toBe(200);
      expect(new Set(ids(byText))).toEqual(new Set([written[0]!.id, written[1]!.id]));
      expect(byText.json.data.find((e: LogEntry) => e.id === written[0]!.id)).toMatchObject({ message: written[0]!.message, details: { host: 'db-primary', attempt: 3 }, level: 'ERROR', category: 'system', instance: 'instance-a', source: 'process' });
      // A word of the details only, a prefix, a keyword.
      expect(ids(await search(b.adminToken, { query: `${marker} primary` }))).toEqual([written[0]!.id]);
      expect(new Set(ids(await search(b.adminToken, { query: `${marker} conn*` })))).toEqual(new Set([written[0]!.id, written[1]!.id]));
      expect(ids(await search(b.adminToken, { query: marker, filters: { keywords: ['resized'] } }))).toEqual([written[1]!.id]);
      // Case does not matter; a component filter narrows.
      expect(ids(await search(b.adminToken, { query: `${marker.toUpperCase()} CONNECTION`, filters: { components: ['cache', 'bus'] } }))).toEqual([written[1]!.id]);
    });

    it('derives entries from events (a key created on A; a relay request failing upstream) and finds them from B', async () => {
      const created = await call(`${a.url}/api/admin/keys`, { token: a.adminToken, body: { name: `secret-name-${marker}`, user_id: 'user-1' } });
      expect(created.status).toBe(201);
      await a.app.ctx.runner.waitFor(await a.app.ctx.store.headPosition(), { projections: ['logs'] });
      const keys = await search(b.adminToken, { filters: { components: ['keys'] } });
      const keyEntry = (keys.json.data as LogEntry[]).find((e) => e.details.key_id === created.json.id);
      expect(keyEntry).toMatchObject({ event: 'key_created', category: 'user_activity', level: 'INFO', user_id: 'user-1', tenant_id: 'default', source: 'event' });
      expect(keyEntry!.id).toMatch(/^ev-/);
      // The key's name is the user's: never in an entry.
      expect((await search(b.adminToken, { query: `secret-name-${marker}` })).json.data).toEqual([]);

      const channel = await call(`${a.url}/v1/admin/channels`, { token: a.adminToken, body: { name: 'c', type: 'openai', base_url: upstream.baseUrl, key: 'test-key', models: [`model-${marker}`] } });
      expect(channel.status).toBe(201);
      await a.app.ctx.views.channels.waitFor(await a.app.ctx.store.headPosition());
      upstream.mode = { kind: 'error', status: 500, message: 'boom' };
      const failed = await call(`${a.url}/v1/chat/completions`, { token: created.json.key, body: { model: `model-${marker}`, messages: [{ role: 'user', content: 'hi' }] } });
      expect(failed.status).toBe(502);
      upstream.mode = { kind: 'reply' };
      const requestId = failed.headers.get('x-request-id');
      await expect
        .poll(async () => (await search(b.adminToken, { query: `model ${marker}`, filters: { components: ['provider:openai'], level: 'ERROR' } })).json.data.length, { timeout: 10_000, interval: 100 })
        .toBe(1);
      const [relayError] = (await search(b.adminToken, { query: `model ${marker}`, filters: { components: ['provider:openai'] } })).json.data as LogEntry[];
      expect(relayError).toMatchObject({ event: 'relay_error', category: 'application', level: 'ERROR', user_id: 'user-1', tenant_id: 'default', details: { status: 502, error_code: 'upstream_error' } });
      if (requestId) expect(relayError!.request_id).toBe(requestId);
      // The prompt is user content: not in the entry.
      expect(JSON.stringify(relayError)).not.toContain('"hi"');
    });

    it('reads level as "this level and above", levels as exactly those; wrong levels are a 400', async () => {
      const levels: LogLevel[] = ['DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'];
      const written = levels.map((level, i) => entry({ level, message: `${marker}lv entry ${level}`, component: `lv-${marker}`, timestamp: at(100 + i) }));
      await publish(written);
      // DEBUG is below LOG_INDEX_LEVEL (INFO): never indexed.
      const all = await call(`${b.url}/api/admin/logs?component=lv-${marker}`, { token: b.adminToken });
      expect(all.json.data.map((e: LogEntry) => e.level)).toEqual(['CRITICAL', 'ERROR', 'WARNING', 'INFO']);
      const warning = await call(`${b.url}/api/admin/logs?component=lv-${marker}&level=warning`, { token: b.adminToken });
      expect(warning.json.data.map((e: LogEntry) => e.level)).toEqual(['CRITICAL', 'ERROR', 'WARNING']);
      const exactly = await search(b.adminToken, { filters: { component: `lv-${marker}`, levels: ['INFO', 'ERROR'] } });
      expect(exactly.json.data.map((e: LogEntry) => e.level)).toEqual(['ERROR', 'INFO']);
      const above = await search(b.adminToken, { filters: { component: `lv-${marker}`, level: 'ERROR' }, sort: 'oldest' });
      expect(above.json.data.map((e: LogEntry) => e.level)).toEqual(['ERROR', 'CRITICAL']);

      const bad = await call(`${b.url}/api/admin/logs?level=LOUD`, { token: b.adminToken });
      expect(bad.status).toBe(400);
      expect(bad.json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_level', param: 'level' });
      expect((await search(b.adminToken, { filters: { levels: ['INFO', 'nope'] } })).json.error).toMatchObject({ code: 'invalid_level', param: 'filters.levels.1' });
    });

    it('matches ip_address exactly or with wildcards (IPv4 and IPv6)', async () => {
      const ips = ['10.0.0.1', '10.0.200.7', '10.1.0.1', '110.0.0.1', '2001:db8::1', '2001:db9::1'];
      const written = ips.map((ip, i) => entry({ ip_address: ip, message: `${marker}ip ${i}`, component: `ip-${marker}`, timestamp: at(200 + i) }));
      await publish(written);
      const find = async (pattern: string) => ((await search(b.adminToken, { filters: { component: `ip-${marker}`, ip_address: pattern }, sort: 'oldest' })).json.data as LogEntry[]).map((e) => e.ip_address);
      expect(await find('10.0.*')).toEqual(['10.0.0.1', '10.0.200.7']);
      expect(await find('10.*')).toEqual(['10.0.0.1', '10.0.200.7', '10.1.0.1']);
      expect(await find('10.*.0.1')).toEqual(['10.0.0.1', '10.1.0.1']);
      expect(await find('2001:db8:*')).toEqual(['2001:db8::1']);
      expect(await find('2001:DB8::1')).toEqual(['2001:db8::1']);
      expect(await find('10.1.0.1')).toEqual(['10.1.0.1']);
      const bad = await search(b.adminToken, { filters: { ip_address: "10.0.0.1' or 1=1" } });
      expect(bad.status).toBe(400);
      expect(bad.json.error).toMatchObject({ code: 'invalid_ip_pattern', param: 'filters.ip_address' });
    });

    it("narrows to one request's entries with request_id (the web UI's filter)", async () => {
      const written = ['req-a', 'req-b', 'req-a'].map((requestId, i) => entry({ request_id: `${requestId}-${marker}`, message: `${marker}rq ${i}`, component: `rq-${marker}`, timestamp: at(250 + i) }));
      await publish(written);
      const found = await search(b.adminToken, { filters: { component: `rq-${marker}`, request_id: `req-a-${marker}` }, sort: 'oldest' });
      expect(found.status).toBe(200);
      expect(ids(found)).toEqual([written[0]!.id, written[2]!.id]);
      const exported = await call(`${b.url}/api/admin/logs/export`, { token: b.adminToken, body: { date_range: { start: at(249), end: at(260) }, format: 'json', filters: { request_id: `req-b-${marker}` } } });
      expect((JSON.parse(exported.text) as LogEntry[]).map((e) => e.id)).toEqual([written[1]!.id]);
    });

    it('pages with an opaque cursor, newest first, without gaps or repeats (entries sharing a timestamp too)', async () => {
      // Seven entries, three of them at one instant: the keyset is (timestamp, id).
      const written = [0, 1, 2, 2, 2, 3, 4].map((m, i) => entry({ message: `${marker}page ${i}`, component: `page-${marker}`, timestamp: at(300 + m) }));
      await publish(written);
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const res = await search(b.adminToken, { filters: { component: `page-${marker}` }, limit: 3, ...(cursor && { cursor }) });
        expect(res.status).toBe(200);
        seen.push(...ids(res));
        cursor = res.json.next_cursor ?? undefined;
        expect(res.json.has_more).toBe(cursor !== undefined);
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      const expected = [...written].sort((x, y) => (x.timestamp === y.timestamp ? (x.id < y.id ? 1 : -1) : x.timestamp < y.timestamp ? 1 : -1)).map((e) => e.id);
      expect(seen).toEqual(expected);
      // The GET list pages the same way.
      const first = await call(`${b.url}/api/admin/logs?component=page-${marker}&limit=4`, { token: b.adminToken });
      const second = await call(`${b.url}/api/admin/logs?component=page-${marker}&limit=4&cursor=${first.json.next_cursor}`, { token: b.adminToken });
      expect([...ids(first), ...ids(second)]).toEqual(expected);
      expect(second.json.next_cursor).toBeNull();

      for (const cursor of ['garbage', Buffer.from('["x","y"]').toString('base64url')]) {
        const bad = await search(b.adminToken, { cursor });
        expect(bad.status).toBe(400);
        expect(bad.json.error).toMatchObject({ code: 'invalid_cursor', param: 'cursor' });
      }
      const limit = await call(`${b.url}/api/admin/logs?limit=1001`, { token: b.adminToken });
      expect(limit.status).toBe(400);
      expect(limit.json.error.param).toBe('limit');
    });

    it("keeps tenants apart: an admin sees only its tenant's entries; operators see all, system entries included; users are refused", async () => {
      const own = entry({ tenant_id: tenantX.tenantId, message: `${marker}tenant x entry` });
      const other = entry({ tenant_id: tenantY.tenantId, message: `${marker}tenant y entry` });
      const system = entry({ message: `${marker}tenant system entry`, category: 'system' });
      await publish([own, other, system]);
      const body = { query: `${marker}tenant` };
      expect(ids(await search(tenantX.token, body))).toEqual([own.id]);
      expect(ids(await search(tenantY.token, body))).toEqual([other.id]);
      expect(new Set(ids(await search(b.adminToken, body)))).toEqual(new Set([own.id, other.id, system.id]));
      // The GET list and exports are scoped the same way.
      const listed = await call(`${b.url}/api/admin/logs?limit=1000`, { token: tenantX.token });
      expect((listed.json.data as LogEntry[]).every((e) => e.tenant_id === tenantX.tenantId)).toBe(true);
      const exported = await call(`${b.url}/api/admin/logs/export`, { token: tenantX.token, body: { date_range: { start: '2026-03-10', end: '2026-03-10' }, format: 'json', query: `${marker}tenant` } });
      expect((exported.json as unknown as LogEntry[]).map((e) => e.id)).toEqual([own.id]);

      for (const path of ['/api/admin/logs']) expect((await call(`${b.url}${path}`, { token: b.userToken })).status).toBe(403);
      expect((await search(b.userToken, body)).status).toBe(403);
      expect((await call(`${b.url}/api/admin/logs/export`, { token: b.userToken, body: { date_range: { start: '2026-03-10', end: '2026-03-11' }, format: 'csv' } })).status).toBe(403);
      expect((await call(`${b.url}/api/admin/logs`)).status).toBe(401);
    });

    it('exports a date range as JSON, CSV (formula-safe, RFC 4180) and text, streamed as an attachment', async () => {
      const formula = '=HYPERLINK("http://evil.test","click")';
      const written = [
        entry({ message: `${marker}exp first, with "quotes"\nand a second line`, component: `exp-${marker}`, timestamp: at(24 * 60 + 1), ip_address: '10.9.9.9' }),
        entry({ message: formula, component: `exp-${marker}`, timestamp: at(24 * 60 + 2), level: 'ERROR', details: { cell: '+1+2', marker } }),
        entry({ message: `${marker}exp outside the range`, component: `exp-${marker}`, timestamp: at(3 * 24 * 60) }),
      ];
      await publish(written);
      const range = { start: '2026-03-11T00:00:00Z', end: '2026-03-11T23:59:59.999Z' };
      const request = (format: string) => call(`${b.url}/api/admin/logs/export`, { token: b.adminToken, body: { date_range: range, format, filters: { component: `exp-${marker}` } } });

      const json = await request('json');
      expect(json.status).toBe(200);
      expect(json.headers.get('content-type')).toContain('application/json');
      expect(json.headers.get('content-disposition')).toBe('attachment; filename="switchyard-logs-2026-03-11T000000Z_2026-03-11T235959Z.json"');
      const parsed = json.json as unknown as LogEntry[];
      expect(parsed.map((e) => e.id)).toEqual([written[0]!.id, written[1]!.id]);
      expect(parsed[1]).toMatchObject({ message: formula, level: 'ERROR', details: { cell: '+1+2', marker } });

      const csv = await request('csv');
      expect(csv.headers.get('content-type')).toContain('text/csv');
      expect(csv.headers.get('content-disposition')).toMatch(/^attachment; filename=".+\.csv"$/);
      const [header, ...records] = parseCsv(csv.text);
      expect(header).toEqual(['timestamp', 'level', 'category', 'component', 'event', 'tenant_id', 'user_id', 'session_id', 'request_id', 'ip_address', 'message', 'details', 'instance', 'source', 'id']);
      expect(records).toHaveLength(2);
      const column = (name: string) => header!.indexOf(name);
      expect(records[0]![column('message')]).toBe(written[0]!.message);
      expect(records[0]![column('ip_address')]).toBe('10.9.9.9');
      // A cell a spreadsheet would run as a formula starts with an apostrophe.
      expect(records[1]![column('message')]).toBe(`'${formula}`);
      expect(JSON.parse(records[1]![column('details')]!)).toEqual({ cell: '+1+2', marker });
      expect(records[1]![column('id')]).toBe(written[1]!.id);

      const text = await request('text');
      expect(text.headers.get('content-type')).toContain('text/plain');
      expect(text.headers.get('content-disposition')).toMatch(/\.log"$/);
      expect(text.text.split('\n').filter(Boolean)).toEqual([
        `[${written[0]!.timestamp}] INFO: ${marker}exp first, with "quotes"\\nand a second line`,
        `[${written[1]!.timestamp}] ERROR: ${formula}`,
      ]);

      const backwards = await call(`${b.url}/api/admin/logs/export`, { token: b.adminToken, body: { date_range: { start: '2026-03-12', end: '2026-03-11' }, format: 'json' } });
      expect(backwards.status).toBe(400);
      expect(backwards.json.error).toMatchObject({ code: 'invalid_date_range', param: 'date_range' });
      const unreadable = await call(`${b.url}/api/admin/logs/export`, { token: b.adminToken, body: { date_range: { start: 'yesterday', end: '2026-03-11' }, format: 'json' } });
      expect(unreadable.json.error).toMatchObject({ code: 'invalid_date_range', param: 'date_range.start' });
      expect((await call(`${b.url}/api/admin/logs/export`, { token: b.adminToken, body: { date_range: range, format: 'xml' } })).json.error).toMatchObject({ code: 'invalid_request', param: 'format' });
    });

    it('documents the three endpoints in /openapi.json, with the order of results', async () => {
      const spec = (await dereferencedOpenapi(b.url));
      expect(Object.keys(spec.paths)).toEqual(expect.arrayContaining(['/api/admin/logs', '/api/admin/logs/search', '/api/admin/logs/export']));
      const search = spec.paths['/api/admin/logs/search'].post;
      expect(search.description).toContain('newest first');
      expect(Object.keys(search.requestBody.content['application/json'].schema.properties)).toEqual(expect.arrayContaining(['query', 'filters', 'sort', 'limit', 'cursor']));
      expect(Object.keys(spec.paths['/api/admin/logs/export'].post.requestBody.content['application/json'].schema.properties)).toEqual(expect.arrayContaining(['date_range', 'format', 'filters']));
    });

    it('rebuilding the logs projection keeps process entries and restores the entries of events', async () => {
      const processEntry = entry({ message: `${marker}rebuild survivor` });
      await publish([processEntry]);
      const before = await search(b.adminToken, { filters: { components: ['keys', 'auth'] }, limit: 1000 });
      expect(before.json.data.length).toBeGreaterThan(0);
      await a.app.ctx.runner.rebuild('logs');
      await a.app.ctx.runner.waitFor(await a.app.ctx.store.headPosition(), { projections: ['logs'] });
      const after = await search(b.adminToken, { filters: { components: ['keys', 'auth'] }, limit: 1000 });
      expect(after.json.data).toEqual(before.json.data);
      expect(ids(await search(b.adminToken, { query: `${marker}rebuild` }))).toEqual([processEntry.id]);
    });
  });
}
