/**
 * Files end to end on the real server, embedded (local storage) and on two distributed instances
 * (NATS + MariaDB + Redis, STORAGE_TYPE=s3 against a local s3rver): upload, list, retrieve,
 * content, text, delete; the official `openai` SDK's files calls with an API key; magic-byte
 * detection; identical uploads sharing one object until the last is deleted (checked in storage);
 * 413s that keep nothing; the storage quota; isolation (another user, another tenant, an admin:
 * 404); processing of a text file to `processed`.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { fileKeyScope } from '../../src/files/names.js';
import { uploadKey } from '../../src/ports/storage.js';
import { call, loggedInUser, startApp, type RunningApp } from '../support/app.js';
import { fileForm, gifBytes, pngBytes } from '../support/files.js';
import { appModes } from '../support/modes.js';
import { startLocalS3, type LocalS3 } from '../support/s3-server.js';

const services = inject('services');
const urls = inject('serviceUrls');
const MODES = appModes(services, urls);

/** POST /v1/files with a multipart form. */
async function upload(url: string, token: string, form: FormData) {
  const res = await fetch(`${url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  const text = await res.text();
  return { status: res.status, text, json: (text ? JSON.parse(text) : undefined) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** Polls until the file leaves uploaded/processing. */
async function settled(url: string, token: string, id: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 200; i++) {
    const res = await call(`${url}/v1/files/${id}`, { token });
    if (res.json.status === 'processed' || res.json.status === 'error') return res.json;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`file ${id} was not processed in time`);
}

describe.each(MODES.map((m) => [m.name, m] as const))('files (%s)', (name, mode) => {
  let a: RunningApp;
  let b: RunningApp;
  let s3: LocalS3 | null = null;
  let cleanup: () => Promise<void> = async () => undefined;
  type User = Awaited<ReturnType<typeof loggedInUser>>;
  /** The owner of most files; another user of the same tenant, its admin; a user of another tenant; a quota tenant's admin and user. */
  let me: User, sameTenant: User, tenantAdmin: User, otherTenant: User, quotaAdmin: User, quotaUser: User;

  /** The object keys in storage under `prefix`. */
  const storedKeys = async (prefix: string): Promise<string[]> => {
    if (s3) {
      const client = new S3Client({ endpoint: s3.config.endpoint, region: s3.config.region, credentials: s3.config.credentials, forcePathStyle: true });
      const listed = await client.send(new ListObjectsV2Command({ Bucket: s3.config.bucket, Prefix: prefix }));
      client.destroy();
      return (listed.Contents ?? []).map((o) => o.Key!);
    }
    const root = join(a.dataDir, 'storage');
    const path = join(root, prefix);
    if (!existsSync(path)) return [];
    if (statSync(path).isFile()) return [prefix];
    return readdirSync(path, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && !e.name.startsWith('.tmp-')) // the local adapter's puts in progress
      .map((e) => join(e.parentPath, e.name).slice(root.length + 1));
  };

  beforeAll(async () => {
    if (!mode.enabled) return;
    const { env, cleanup: drop } = mode.env();
    cleanup = drop;
    const files: Record<string, string> = { MAX_FILE_SIZE: '1MB', FILE_TEXT_LIMIT: '1000', HEALTH_CHECK_ENABLED: 'false' };
    if (name === 'distributed') {
      s3 = await startLocalS3();
      Object.assign(files, {
        STORAGE_TYPE: 's3',
        S3_BUCKET: s3.config.bucket,
        S3_ENDPOINT: s3.config.endpoint!,
        S3_REGION: s3.config.region,
        S3_ACCESS_KEY_ID: 'S3RVER',
        S3_SECRET_ACCESS_KEY: 'S3RVER',
        S3_FORCE_PATH_STYLE: 'true',
      });
    }
    a = await startApp({ ...env, ...files });
    b = name === 'distributed' ? await startApp({ ...env, ...files }) : a;
    [me, otherTenant, quotaAdmin] = await Promise.all([loggedInUser(a, 'user'), loggedInUser(a, 'user'), loggedInUser(a, 'admin')]);
    [sameTenant, tenantAdmin, quotaUser] = await Promise.all([loggedInUser(a, 'user', me.tenantId), loggedInUser(a, 'admin', me.tenantId), loggedInUser(a, 'user', quotaAdmin.tenantId)]);
  });
  afterAll(async () => {
    if (b !== a) await b?.close();
    await a?.close();
    await s3?.stop();
    await cleanup();
  });

  it.runIf(mode.enabled)('uploads a text file, reads it on the other instance at once, processes it, serves bytes and text, deletes it', async () => {
    const content = 'Meeting notes\n\nShip the files feature.\n';
    const before = Math.floor(Date.now() / 1000);
    const up = await upload(a.url, me.token, fileForm(content, 'notes.txt'));
    expect(up.status, up.text).toBe(201);
    expect(up.json).toMatchObject({ object: 'file', bytes: Buffer.byteLength(content), filename: 'notes.txt', purpose: 'chat', mime_type: 'text/plain', status_details: null });
    expect(up.json.id).toMatch(/^file-[0-9a-f]{32}$/);
    expect(up.json.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(up.json.created_at).toBeGreaterThanOrEqual(before);
    expect(['uploaded', 'processing', 'processed']).toContain(up.json.status);

    const got = await call(`${b.url}/v1/files/${up.json.id}`, { token: me.token });
    expect(got.status, got.text).toBe(200);
    expect(got.json).toMatchObject({ id: up.json.id, filename: 'notes.txt', sha256: up.json.sha256 });

    expect(await settled(b.url, me.token, up.json.id)).toMatchObject({ status: 'processed', status_details: null });
    const text = await call(`${b.url}/v1/files/${up.json.id}/text`, { token: me.token });
    expect(text.status, text.text).toBe(200);
    expect(text.json).toEqual({ id: up.json.id, object: 'file.text', text: content, text_chars: content.length, truncated: false, pages: null });

    const raw = await fetch(`${b.url}/v1/files/${up.json.id}/content`, { headers: { authorization: `Bearer ${me.token}` } });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(raw.headers.get('content-length')).toBe(String(Buffer.byteLength(content)));
    expect(raw.headers.get('content-disposition')).toBe(`attachment; filename="notes.txt"; filename*=UTF-8''notes.txt`);
    expect(await raw.text()).toBe(content);

    const list = await call(`${a.url}/v1/files`, { token: me.token });
    expect(list.json).toMatchObject({ object: 'list', has_more: false });
    expect(list.json.data.map((f: { id: string }) => f.id)).toContain(up.json.id);

    const del = await call(`${b.url}/v1/files/${up.json.id}`, { method: 'DELETE', token: me.token });
    expect(del.status, del.text).toBe(200);
    expect(del.json).toEqual({ id: up.json.id, object: 'file', deleted: true });
    for (const path of ['', '/content', '/text']) expect((await call(`${a.url}/v1/files/${up.json.id}${path}`, { token: me.token })).status).toBe(404);
    expect((await call(`${a.url}/v1/files/${up.json.id}`, { method: 'DELETE', token: me.token })).status).toBe(404);
    expect(await storedKeys(`texts/${up.json.id}`)).toEqual([]);
  });

  it.runIf(mode.enabled)('works with the openai SDK and an API key: create, retrieve, list, content, delete', async () => {
    const created = await call(`${a.url}/v1/keys`, { token: me.token, body: { name: 'files sdk' } });
    expect(created.status, created.text).toBe(201);
    const client = new OpenAI({ apiKey: created.json.key, baseURL: `${a.url}/v1`, maxRetries: 0 });
    const body = '{"hello": "sdk"}';
    const file = await client.files.create({ file: await toFile(Buffer.from(body), 'data.json'), purpose: 'user_data' });
    expect(file).toMatchObject({ object: 'file', bytes: body.length, filename: 'data.json', purpose: 'user_data' });
    expect((file as unknown as { mime_type: string }).mime_type).toBe('application/json');
    expect(await client.files.retrieve(file.id)).toMatchObject({ id: file.id, filename: 'data.json' });
    const ids: string[] = [];
    for await (const f of client.files.list({ limit: 1 })) ids.push(f.id);
    expect(ids).toContain(file.id);
    expect(await (await client.files.content(file.id)).text()).toBe(body);
    // The key's user owns the file: the same user's token sees it.
    expect((await call(`${a.url}/v1/files/${file.id}`, { token: me.token })).status).toBe(200);
    expect(await client.files.delete(file.id)).toMatchObject({ id: file.id, deleted: true });
    await expect(client.files.retrieve(file.id)).rejects.toMatchObject({ status: 404 });
  });

  it.runIf(mode.enabled)('detects the type from the content: a PNG named .txt is image/png', async () => {
    const png = pngBytes(16, 16);
    const up = await upload(a.url, me.token, fileForm(png, 'holiday.txt'));
    expect(up.status, up.text).toBe(201);
    expect(up.json).toMatchObject({ mime_type: 'image/png', filename: 'holiday.txt', bytes: png.length });
    const raw = await fetch(`${b.url}/v1/files/${up.json.id}/content`, { headers: { authorization: `Bearer ${me.token}` } });
    expect(raw.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await raw.arrayBuffer()).equals(png)).toBe(true);
  });

  it.runIf(mode.enabled)('stores identical uploads once; the bytes go only when the last file is deleted', async () => {
    const content = `shared bytes ${Math.random()}`;
    const first = await upload(a.url, me.token, fileForm(content, 'one.txt'));
    const other = otherTenant;
    const second = await upload(b.url, other.token, fileForm(content, 'two.txt'));
    expect(second.status, second.text).toBe(201);
    expect(second.json.sha256).toBe(first.json.sha256);
    const key = uploadKey(first.json.sha256);
    expect(await storedKeys(key)).toEqual([key]);
    expect(await storedKeys('tmp/')).toEqual([]);

    expect((await call(`${a.url}/v1/files/${first.json.id}`, { method: 'DELETE', token: me.token })).status).toBe(200);
    expect(await storedKeys(key)).toEqual([key]);
    const still = await fetch(`${a.url}/v1/files/${second.json.id}/content`, { headers: { authorization: `Bearer ${other.token}` } });
    expect(await still.text()).toBe(content);
    expect((await call(`${b.url}/v1/files/${second.json.id}`, { method: 'DELETE', token: other.token })).status).toBe(200);
    expect(await storedKeys(key)).toEqual([]);

    // The same bytes again after the purge: stored anew.
    const third = await upload(a.url, me.token, fileForm(content, 'three.txt'));
    expect(await storedKeys(key)).toEqual([key]);
    expect(await (await fetch(`${b.url}/v1/files/${third.json.id}/content`, { headers: { authorization: `Bearer ${me.token}` } })).text()).toBe(content);
  });

  it.runIf(mode.enabled)('keeps the reference count right under concurrent uploads and deletions on both instances', async () => {
    const content = `raced bytes ${Math.random()}`;
    const owners = [me, otherTenant, sameTenant, me];
    const ups = await Promise.all(owners.map((o, i) => upload(i % 2 === 0 ? a.url : b.url, o.token, fileForm(content, `race-${i}.txt`))));
    for (const up of ups) expect(up.status, up.text).toBe(201);
    const key = uploadKey(ups[0]!.json.sha256);
    expect(await storedKeys(key)).toEqual([key]);
    // All but one go at once: the bytes stay for the last.
    const dels = await Promise.all(ups.slice(1).map((up, i) => call(`${i % 2 === 0 ? b.url : a.url}/v1/files/${up.json.id}`, { method: 'DELETE', token: owners[i + 1]!.token })));
    for (const del of dels) expect(del.status, del.text).toBe(200);
    expect(await storedKeys(key)).toEqual([key]);
    // The last deletion races a new upload of the same bytes: whichever wins, the new file's bytes are there.
    const [del, again] = await Promise.all([call(`${b.url}/v1/files/${ups[0]!.json.id}`, { method: 'DELETE', token: me.token }), upload(a.url, me.token, fileForm(content, 'again.txt'))]);
    expect(del.status).toBe(200);
    expect(again.status, again.text).toBe(201);
    expect(await storedKeys(key)).toEqual([key]);
    expect(await (await fetch(`${b.url}/v1/files/${again.json.id}/content`, { headers: { authorization: `Bearer ${me.token}` } })).text()).toBe(content);
    expect((await call(`${a.url}/v1/files/${again.json.id}`, { method: 'DELETE', token: me.token })).status).toBe(200);
    expect(await storedKeys(key)).toEqual([]);
  });

  it.runIf(mode.enabled)("deletes a user's files with the user: names shredded, bytes released", async () => {
    const leaving = await loggedInUser(a, 'user', me.tenantId);
    const content = `leaving ${Math.random()}`;
    const up = await upload(a.url, leaving.token, fileForm(content, 'goodbye.txt'));
    expect(up.status, up.text).toBe(201);
    const key = uploadKey(up.json.sha256);
    expect(await storedKeys(key)).toEqual([key]);
    const del = await call(`${b.url}/v1/admin/users/${leaving.userId}`, { method: 'DELETE', token: tenantAdmin.token });
    expect(del.status, del.text).toBe(200);
    expect(del.json).toMatchObject({ files_deleted: 1 });
    expect(await a.app.ctx.dataKeys.get(fileKeyScope(leaving.userId, up.json.id))).toBeNull();
    expect(await storedKeys(key)).toEqual([]);
    const row = await a.app.ctx.sql.db.selectFrom('files').selectAll().where('id', '=', up.json.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ deleted: 1, filename: null });
  });

  it.runIf(mode.enabled)('refuses a file over MAX_FILE_SIZE with 413 file_too_large and keeps nothing of it', async () => {
    // What uploads and temp uploads hold (extracted texts of earlier tests may still be arriving).
    const kept = async () => [...(await storedKeys('uploads/')), ...(await storedKeys('tmp/'))];
    const before = await kept();
    const big = Buffer.alloc(1024 * 1024 + 10, 'x');
    const res = await upload(a.url, me.token, fileForm(big, 'big.txt'));
    expect(res.status, res.text).toBe(413);
    expect(res.json.error).toMatchObject({ code: 'file_too_large', param: 'file' });
    expect(res.json.error.message).toContain('MAX_FILE_SIZE');
    expect(res.json.error.message).toContain('1 MB');
    expect(await kept()).toEqual(before);
    // The connection is still usable, and a file at the limit passes.
    const ok = await upload(a.url, me.token, fileForm(Buffer.alloc(1024 * 1024, 'y'), 'max.txt'));
    expect(ok.status, ok.text).toBe(201);
  });

  it.runIf(mode.enabled)('answers 400 with the param when file or purpose is missing', async () => {
    const noPurpose = await upload(a.url, me.token, fileForm('x', 'a.txt', null));
    expect(noPurpose.status).toBe(400);
    expect(noPurpose.json.error.param).toBe('purpose');
    const form = new FormData();
    form.append('purpose', 'chat');
    const noFile = await upload(a.url, me.token, form);
    expect(noFile.status).toBe(400);
    expect(noFile.json.error.param).toBe('file');
    expect(await storedKeys('tmp/')).toEqual([]);
    const json = await call(`${a.url}/v1/files`, { token: me.token, body: { purpose: 'chat' } });
    expect(json.status).toBe(400);
    expect((await upload(a.url, 'not-a-token', fileForm('x', 'a.txt'))).status).toBe(401);
  });

  it.runIf(mode.enabled)("enforces the tenant's storage quota with 413 storage_quota_exceeded", async () => {
    const [admin, user] = [quotaAdmin, quotaUser];
    const set = await call(`${a.url}/v1/admin/settings`, { method: 'PATCH', token: admin.token, body: { storage_quota_bytes: 1000 } });
    expect(set.status, set.text).toBe(200);
    expect(set.json.storage_quota_bytes).toBe(1000);
    expect((await upload(b.url, user.token, fileForm(Buffer.alloc(600, 'a'), 'a.txt'))).status).toBe(201);
    const over = await upload(b.url, user.token, fileForm(Buffer.alloc(600, 'b'), 'b.txt'));
    expect(over.status, over.text).toBe(413);
    expect(over.json.error.code).toBe('storage_quota_exceeded');
    expect(await storedKeys('tmp/')).toEqual([]);
    expect((await upload(b.url, user.token, fileForm(Buffer.alloc(400, 'c'), 'c.txt'))).status).toBe(201);
    // Other tenants are not limited by it.
    expect((await upload(b.url, me.token, fileForm(Buffer.alloc(2000, 'd'), 'd.txt'))).status).toBe(201);
    // Admins see counts and bytes per user and status of their tenant only, never names.
    const usage = await call(`${a.url}/v1/admin/files/usage`, { token: admin.token });
    expect(usage.status, usage.text).toBe(200);
    const rows = usage.json.data as Array<{ tenant_id: string; user_id: string; status: string; files: number; bytes: number }>;
    expect(new Set(rows.map((r) => `${r.tenant_id}/${r.user_id}`))).toEqual(new Set([`${admin.tenantId}/${user.userId}`]));
    expect(rows.reduce((n, r) => n + r.files, 0)).toBe(2);
    expect(rows.reduce((n, r) => n + r.bytes, 0)).toBe(1000);
    expect(JSON.stringify(usage.json)).not.toMatch(/a\.txt|c\.txt/);
    const everyTenant = await call(`${a.url}/v1/admin/files/usage`, { token: a.adminToken });
    const tenants = new Set(everyTenant.json.data.map((r: { tenant_id: string }) => r.tenant_id));
    expect(tenants.has(me.tenantId) && tenants.has(admin.tenantId)).toBe(true);
    expect((await call(`${a.url}/v1/admin/files/usage?tenant_id=${me.tenantId}`, { token: admin.token })).status).toBe(403);
    expect((await call(`${a.url}/v1/admin/files/usage`, { token: user.token })).status).toBe(403);
  });

  it.runIf(mode.enabled)('shows a file to its owner only: another user, another tenant, an admin get 404', async () => {
    const up = await upload(a.url, me.token, fileForm('private', 'secret-plans.txt'));
    for (const token of [sameTenant.token, otherTenant.token, tenantAdmin.token, a.adminToken]) {
      for (const [method, path] of [
        ['GET', ''],
        ['GET', '/content'],
        ['GET', '/text'],
        ['DELETE', ''],
      ] as const) {
        const res = await call(`${b.url}/v1/files/${up.json.id}${path}`, { method, token });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.json.error.code).toBe('file_not_found');
      }
      const list = await call(`${a.url}/v1/files`, { token });
      expect(list.json.data.map((f: { id: string }) => f.id)).not.toContain(up.json.id);
    }
    expect((await call(`${a.url}/v1/files/${up.json.id}`, { token: me.token })).json.filename).toBe('secret-plans.txt');
  });

  it.runIf(mode.enabled)('gives chat processed files: text cut at FILE_TEXT_LIMIT with a note, images as data URLs; others not ready or not found', async () => {
    const attachments = b.app.ctx.files.attachments;
    const owner = { tenantId: me.tenantId, userId: me.userId };
    const long = 'word '.repeat(300);
    const doc = await upload(a.url, me.token, fileForm(long, 'long.md'));
    expect(await settled(a.url, me.token, doc.json.id)).toMatchObject({ status: 'processed', mime_type: 'text/markdown' });
    const attached = await attachments.attach(owner, doc.json.id);
    expect(attached).toMatchObject({ kind: 'text', id: doc.json.id, filename: 'long.md', mimeType: 'text/markdown', truncated: true });
    expect(attached.kind === 'text' && attached.text.startsWith(long.slice(0, 1000))).toBe(true);
    expect(attached.text).toContain('1500 characters');
    // The stored text stays whole, marked.
    expect((await call(`${a.url}/v1/files/${doc.json.id}/text`, { token: me.token })).json).toMatchObject({ text: long, text_chars: 1500, truncated: true });

    const png = pngBytes(4, 4);
    const image = await upload(a.url, me.token, fileForm(png, 'pixel.png'));
    await settled(a.url, me.token, image.json.id);
    expect(await attachments.attach(owner, image.json.id)).toEqual({ kind: 'image', id: image.json.id, filename: 'pixel.png', mimeType: 'image/png', dataUrl: `data:image/png;base64,${png.toString('base64')}`, text: null, truncated: false });

    const gif = await upload(a.url, me.token, fileForm(gifBytes(), 'anim.gif'));
    expect(gif.json.mime_type).toBe('application/octet-stream');
    const failed = await settled(a.url, me.token, gif.json.id);
    expect(failed).toMatchObject({ status: 'error' });
    expect(failed.status_details).toContain('unsupported type');
    await expect(attachments.attach(owner, gif.json.id)).rejects.toMatchObject({ status: 409, code: 'file_not_ready', message: expect.stringContaining('unsupported type') });
    const text = await call(`${b.url}/v1/files/${gif.json.id}/text`, { token: me.token });
    expect(text.status).toBe(409);
    expect(text.json.error.code).toBe('file_not_ready');

    await expect(attachments.attach({ tenantId: sameTenant.tenantId, userId: sameTenant.userId }, doc.json.id)).rejects.toMatchObject({ status: 404, code: 'file_not_found' });
    await expect(attachments.attach(owner, 'file-00000000000000000000000000000000')).rejects.toMatchObject({ status: 404, code: 'file_not_found' });
  });
});
