/**
 * "Deletion must really delete" (issue 17, Privacy), tested as the issue says: a conversation
 * with a unique text in its title, system prompt and messages is deleted, then every file of the
 * data is searched byte by byte for that text — found before (the search reaches the read
 * models), nowhere after, and still nowhere once the projection is rebuilt from the log, which
 * then shows the conversation as deleted.
 *
 * Embedded: every file of the SQLite data directory (event log, read models, their WAL files).
 * Distributed: the NATS JetStream store directory of the test's stream (the log never holds the
 * text in the clear: its sealed form is found there, the clear text never), and the MariaDB read
 * models through SQL.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { conversations } from '../../src/commands/conversations/decider.js';
import { conversationKeyScope, userKeyPrefix } from '../../src/conversations/texts.js';
import { call, loggedInUser, startApp, type RunningApp } from '../support/app.js';
import { appendMessages } from '../support/conversations.js';
import { appModes } from '../support/modes.js';

const services = inject('services');
const urls = inject('serviceUrls');
const MODES = appModes(services, urls);

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) return [];
    return stat.isDirectory() ? filesUnder(path) : stat.isFile() ? [path] : [];
  });
}

/** The files under `dir` whose bytes hold `needle` (UTF-8). */
function filesHolding(dir: string, needle: string): string[] {
  const bytes = Buffer.from(needle, 'utf8');
  return filesUnder(dir).filter((file) => {
    try {
      return readFileSync(file).includes(bytes);
    } catch {
      return false; // removed meanwhile (a WAL truncated, a journal segment rotated)
    }
  });
}

/** The JetStream store directory of the local nats-server (its `-sd` / `--store_dir`), or null. */
function natsStoreDir(): string | null {
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let args: string[];
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (!args[0]?.endsWith('nats-server')) continue;
    const at = args.findIndex((a) => a === '-sd' || a === '--store_dir' || a === '-store_dir');
    if (at >= 0 && args[at + 1]) return args[at + 1]!;
  }
  return null;
}

/** A text no other test writes: lower-case, so the search columns hold it as is. */
const uniqueText = () => `zephyrquill${randomBytes(8).toString('hex')}`;

describe.each(MODES.map((m) => [m.name, m] as const))('deleting a conversation really deletes (%s)', (name, mode) => {
  let s: RunningApp;
  let env: Record<string, string> = {};
  let cleanup: () => Promise<void> = async () => undefined;

  beforeAll(async () => {
    if (!mode.enabled) return;
    const made = mode.env();
    env = made.env;
    cleanup = made.cleanup;
    s = await startApp({ ...env, HEALTH_CHECK_ENABLED: 'false' });
  });
  afterAll(async () => {
    await s?.close();
    await cleanup();
  });

  /** A conversation whose title, system prompt and messages hold `secret`. */
  async function secretConversation(user: { tenantId: string; userId: string; token: string }, secret: string): Promise<string> {
    const res = await call(`${s.url}/v1/conversations`, { token: user.token, body: { title: `Notes ${secret}`, system_prompt: `Remember ${secret}.` } });
    expect(res.status, res.text).toBe(201);
    const id = res.json.id as string;
    await appendMessages(s, user, id, [
      { role: 'user', content: `My code word is ${secret}, keep it.` },
      { role: 'assistant', content: `Noted: ${secret}.`, model: 'gpt-x' },
    ]);
    expect((await call(`${s.url}/v1/conversations/search?q=${secret}`, { token: user.token })).json.data.map((c: { id: string }) => c.id)).toEqual([id]);
    return id;
  }

  async function expectDeletedEverywhere(user: { tenantId: string; userId: string; token: string }, id: string, syncedFrom: string): Promise<void> {
    expect((await call(`${s.url}/v1/conversations/${id}`, { token: user.token })).status).toBe(404);
    const sync = await call(`${s.url}/v1/conversations/sync?since=${syncedFrom}`, { token: user.token });
    expect(sync.json.changes).toContainEqual(expect.objectContaining({ id, op: 'deleted', conversation: null }));
    const db = s.app.ctx.sql.db;
    expect(await db.selectFrom('conversations').select(['deleted', 'title', 'search_title', 'system_prompt']).where('id', '=', id).execute()).toEqual([
      { deleted: 1, title: null, search_title: null, system_prompt: null },
    ]);
    expect(await db.selectFrom('conversation_messages').select('id').where('conversation_id', '=', id).execute()).toEqual([]);
    expect(await s.app.ctx.dataKeys.get(conversationKeyScope(user.userId, id))).toBeNull();
  }

  it.runIf(mode.enabled && name === 'embedded')('embedded: the text is in the SQLite files before, in none of them after the deletion and after a rebuild', async () => {
    const user = await loggedInUser(s, 'user');
    const secret = uniqueText();
    const cursor = (await call(`${s.url}/v1/conversations/sync`, { token: user.token })).json.cursor as string;
    const id = await secretConversation(user, secret);
    const before = filesHolding(s.dataDir, secret);
    // Only the read models hold it in the clear (the log holds it sealed).
    expect(before.length, 'the byte search finds the text before the deletion').toBeGreaterThan(0);
    expect(before.every((f) => /readmodels|read-models|\.db/.test(f))).toBe(true);
    expect(filesUnder(s.dataDir).filter((f) => /events/.test(f)).flatMap((f) => (readFileSync(f).includes(Buffer.from(secret)) ? [f] : []))).toEqual([]);

    const del = await call(`${s.url}/v1/conversations/${id}`, { method: 'DELETE', token: user.token });
    expect(del.status, del.text).toBe(200);
    expect(filesHolding(s.dataDir, secret)).toEqual([]);
    await expectDeletedEverywhere(user, id, cursor);

    await s.app.ctx.runner.rebuild('conversations');
    await expectDeletedEverywhere(user, id, cursor);
    expect(filesHolding(s.dataDir, secret)).toEqual([]);
  });

  it.runIf(mode.enabled && name === 'embedded')('embedded: a conversation kept beside it keeps its text through the rebuild', async () => {
    const user = await loggedInUser(s, 'user');
    const kept = uniqueText();
    const id = await secretConversation(user, kept);
    await s.app.ctx.runner.rebuild('conversations');
    const got = await call(`${s.url}/v1/conversations/${id}`, { token: user.token });
    expect(got.json.title).toBe(`Notes ${kept}`);
    expect(got.json.messages.map((m: { content: string }) => m.content)).toEqual([`My code word is ${kept}, keep it.`, `Noted: ${kept}.`]);
    expect(filesHolding(s.dataDir, kept).length).toBeGreaterThan(0);
  });

  it.runIf(mode.enabled && name === 'distributed')('distributed: the JetStream store never holds the text in the clear; the read models drop it; a rebuild shows the conversation deleted', async () => {
    const user = await loggedInUser(s, 'user');
    const secret = uniqueText();
    const cursor = (await call(`${s.url}/v1/conversations/sync`, { token: user.token })).json.cursor as string;
    const id = await secretConversation(user, secret);
    const [started] = await s.app.ctx.store.readStream(`conversation-${id}`);
    const sealedTitle = (started!.data as { title: string }).title;

    const stream = env.NATS_STREAM!;
    const storeDir = natsStoreDir();
    const streamDir = storeDir === null ? null : filesUnder(storeDir).find((f) => f.includes(`/streams/${stream}/`))?.replace(/\/streams\/([^/]+)\/.*$/, '/streams/$1');
    /** The stream's bytes: its files in the store directory, or (not reachable) its raw messages. */
    const streamBytes = async (): Promise<Buffer> => {
      if (streamDir && existsSync(streamDir)) return Buffer.concat(filesUnder(streamDir).map((f) => readFileSync(f)));
      const nc = await connect({ servers: urls.nats });
      try {
        const jsm = await jetstreamManager(nc);
        const info = await jsm.streams.info(stream);
        const parts: Buffer[] = [];
        for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
          const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
          if (m) parts.push(Buffer.from(m.data));
        }
        return Buffer.concat(parts);
      } finally {
        await nc.close();
      }
    };
    // The search reaches the stream's messages: the sealed title is there (the server writes its block files at once or soon).
    let bytes = await streamBytes();
    for (let i = 0; i < 50 && !bytes.includes(Buffer.from(sealedTitle)); i++) {
      await new Promise((r) => setTimeout(r, 100));
      bytes = await streamBytes();
    }
    expect(bytes.includes(Buffer.from(sealedTitle)), `sealed title in ${streamDir ?? 'the raw messages'}`).toBe(true);
    expect(bytes.includes(Buffer.from(secret))).toBe(false);
    // The read models hold it in the clear until the deletion.
    expect((await s.app.ctx.sql.db.selectFrom('conversation_messages').select('content').where('conversation_id', '=', id).execute()).map((r) => r.content).join(' ')).toContain(secret);

    const del = await call(`${s.url}/v1/conversations/${id}`, { method: 'DELETE', token: user.token });
    expect(del.status, del.text).toBe(200);
    await expectDeletedEverywhere(user, id, cursor);
    expect((await streamBytes()).includes(Buffer.from(secret))).toBe(false);

    await s.app.ctx.runner.rebuild('conversations');
    await expectDeletedEverywhere(user, id, cursor);
  });

  it.runIf(mode.enabled)('a deletion cut short before the key was destroyed is finished by asking again (404 all the same)', async () => {
    const user = await loggedInUser(s, 'user');
    const id = await secretConversation(user, uniqueText());
    // The event is in the log, the key is not destroyed yet (a crash between the two).
    const { position } = await s.app.ctx.commands.execute(conversations, id, { type: 'DeleteConversation', by: user.userId }, { tenantId: user.tenantId });
    await s.app.ctx.runner.waitFor(position!, { projections: ['conversations'] });
    expect(await s.app.ctx.dataKeys.get(conversationKeyScope(user.userId, id))).not.toBeNull();
    // Someone else asking changes nothing.
    const other = await loggedInUser(s, 'user', user.tenantId);
    expect((await call(`${s.url}/v1/conversations/${id}`, { method: 'DELETE', token: other.token })).status).toBe(404);
    expect(await s.app.ctx.dataKeys.get(conversationKeyScope(user.userId, id))).not.toBeNull();
    const again = await call(`${s.url}/v1/conversations/${id}`, { method: 'DELETE', token: user.token });
    expect(again.json.error.code).toBe('conversation_not_found');
    expect(await s.app.ctx.dataKeys.get(conversationKeyScope(user.userId, id))).toBeNull();
  });

  it.runIf(mode.enabled)('deleting the user (UserDeleted, keys destroyed by prefix) turns every conversation of the user into a tombstone, also after a rebuild', async () => {
    const user = await loggedInUser(s, 'user');
    const secret = uniqueText();
    const cursor = (await call(`${s.url}/v1/conversations/sync`, { token: user.token })).json.cursor as string;
    const first = await secretConversation(user, secret);
    const second = await secretConversation(user, `${secret}b`);
    // What the users aggregate appends when a user is deleted (conv-prefs), and the keys' destruction beside it.
    const { position } = await s.app.ctx.store.append(`user-${user.userId}`, [{ type: 'UserDeleted', data: { user_id: user.userId, by: null } }], { expectedVersion: 'any', tenantId: user.tenantId });
    expect(await s.app.ctx.dataKeys.destroyPrefix(userKeyPrefix(user.userId))).toBe(2);
    await s.app.ctx.runner.waitFor(position, { projections: ['conversations'] });
    for (const id of [first, second]) await expectDeletedEverywhere(user, id, cursor);
    if (name === 'embedded') {
      await s.app.ctx.runner.rebuild('conversations');
      for (const id of [first, second]) await expectDeletedEverywhere(user, id, cursor);
    }
  });
});
