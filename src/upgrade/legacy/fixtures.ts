/**
 * A made-up Switchyard 1.x installation at a given version, for operators to rehearse an upgrade
 * on (and for the tests): the version's tables exactly as src/upgrade/legacy/schema.ts (and
 * docs/upgrading.md) define them, filled with rows the way that version wrote them (bcrypt
 * passwords, plaintext or hashed API keys, uploads on disk under YYYY/MM/), and its history in
 * schema_migrations. The rows come from a seeded generator: the same options give the same data,
 * except the secrets (the admin password unless given, key secrets), which are random.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import bcrypt from 'bcryptjs';
import { sql } from 'kysely';
import { ConfigError } from '../../errors.js';
import { openDatabaseUrl } from '../../imports/database-url.js';
import { createLegacyTable, LEGACY_VERSIONS, liveColumns, schemaAt, sqlTime, VERSION_DESCRIPTIONS, type UpgradableVersion } from './schema.js';

export interface FixtureOptions {
  version: UpgradableVersion;
  /** Database URL (sqlite:/abs/file.db, mysql://…, postgres://…); its tables must not exist yet. */
  url: string;
  uploads: string;
  users?: number;
  messages?: number;
  /** The first channel's base_url (e.g. a local fake upstream); NULL (the provider's default) if absent. */
  channelBaseUrl?: string | null;
  /** The first channel's provider key (random if absent). */
  channelKey?: string;
  /** The first admin's password (random if absent; printed either way). */
  adminPassword?: string;
  seed?: number;
}

export interface FixtureSummary {
  version: UpgradableVersion;
  database: string;
  uploads: string;
  counts: Record<'users' | 'admins' | 'channels' | 'conversations' | 'messages' | 'files' | 'api_keys' | 'presets', number>;
  /** Rehearsal credentials: the first admin, and an active API key of theirs. */
  admin: { email: string; password: string };
  sample_key: string;
  /** Models of the first (enabled) channel. */
  models: string[];
}

/** mulberry32: small, seeded, good enough for made-up rows. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Random letters and digits from the system's CSPRNG (secrets: never from the seeded generator). */
function randomAlphanumeric(length: number): string {
  const bytes = randomBytes(length * 2);
  let out = '';
  for (let i = 0; out.length < length; i++) {
    const b = bytes[i % bytes.length]!;
    if (b < 248) out += ALPHANUMERIC[b % 62];
  }
  return out;
}

/** A 1.x API key secret: `sk-` and 48 letters and digits. */
export function legacyKeySecret(): string {
  return `sk-${randomAlphanumeric(48)}`;
}

const WORDS = 'the a model prompt answer channel token latency budget deploy cluster review summary draft invoice meeting schedule report chart python query index cache retry timeout upstream release notes customer ticket translate explain refactor test'.split(' ');
const TOPICS = ['release notes', 'SQL tuning', 'a birthday poem', 'quarterly report', 'Kubernetes probes', 'travel plans', 'a bug in the parser', 'French grammar'];

function sentence(random: () => number, words: number): string {
  const picked = Array.from({ length: words }, () => WORDS[Math.floor(random() * WORDS.length)]!);
  const text = picked.join(' ');
  return `${text[0]!.toUpperCase()}${text.slice(1)}.`;
}

function paragraph(random: () => number): string {
  return Array.from({ length: 1 + Math.floor(random() * 3) }, () => sentence(random, 6 + Math.floor(random() * 10))).join(' ');
}

async function chunked<T>(rows: T[], size: number, write: (chunk: T[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < rows.length; i += size) await write(rows.slice(i, i + size));
}

const at = (version: UpgradableVersion, since: string) => LEGACY_VERSIONS.indexOf(version) >= LEGACY_VERSIONS.indexOf(since as UpgradableVersion);

/** Writes the fixture; throws a ConfigError if the database already has a schema_migrations table. */
export async function generateFixture(options: FixtureOptions): Promise<FixtureSummary> {
  const { version } = options;
  const userCount = Math.max(1, options.users ?? 4);
  const messageCount = Math.max(0, options.messages ?? 40);
  const random = rng(options.seed ?? 1);
  const adminPassword = options.adminPassword ?? randomAlphanumeric(20);
  const database = await openDatabaseUrl(options.url, { create: true });
  const { db, dialect } = database;
  try {
    if ((await liveColumns(db)).has('schema_migrations')) throw new ConfigError(`${database.display} already holds an installation (schema_migrations exists): give an empty database`);
    for (const table of schemaAt(version)) await createLegacyTable(db, dialect, table);

    const base = Date.UTC(2024, 0, 1);
    const day = 86_400_000;
    const when = (maxDays: number) => new Date(base + Math.floor(random() * maxDays * day) + Math.floor(random() * day));
    const v17 = at(version, '1.7.0');
    const v18 = at(version, '1.8.0');
    const v19 = at(version, '1.9.0');

    // History: the baseline and every version up to this one.
    const history = LEGACY_VERSIONS.slice(0, LEGACY_VERSIONS.indexOf(version) + 1);
    await db.insertInto('schema_migrations').values(history.map((v, i) => ({ version: v, applied_at: sqlTime(new Date(base + i * 60 * day)), description: VERSION_DESCRIPTIONS[v] }))).execute();

    // Users: 1 is the admin whose password is printed; one more admin from 5 users on; the last one disabled (1.9+).
    const admins = userCount >= 5 ? 2 : 1;
    const adminHash = await bcrypt.hash(adminPassword, 10);
    const users = [];
    for (let id = 1; id <= userCount; id++) {
      // Cost 4 for the others keeps big fixtures quick; login verifies any cost.
      const hash = id === 1 ? adminHash : await bcrypt.hash(randomAlphanumeric(16), 4);
      users.push({
        id,
        email: id === 1 ? 'admin@example.com' : `user${id}@example.com`,
        password_hash: hash,
        display_name: id === 1 ? 'Ada Admin' : `User ${id}`,
        is_admin: id <= admins ? 1 : 0,
        ...(v19 && { disabled: userCount >= 3 && id === userCount ? 1 : 0 }),
        last_login_at: random() < 0.7 ? sqlTime(when(300)) : null,
        created_at: sqlTime(when(30)),
      });
    }
    await chunked(users, 200, (rows) => db.insertInto('users').values(rows).execute());

    const models = ['gpt-4o-mini', 'gpt-4o'];
    const channels = [
      { id: 1, name: 'Main OpenAI', type: 'openai', api_key: options.channelKey ?? `sk-upstream-${randomAlphanumeric(32)}`, base_url: options.channelBaseUrl ?? null, models: models.join(','), priority: 10, enabled: 1, created_at: sqlTime(when(10)), ...(v18 && { weight: 3, model_mapping: JSON.stringify({ 'gpt-4': 'gpt-4o' }) }) },
      { id: 2, name: 'Claude (spare)', type: 'anthropic', api_key: `sk-ant-api03-${randomAlphanumeric(40)}`, base_url: null, models: 'claude-3-5-sonnet-latest', priority: 5, enabled: 0, created_at: sqlTime(when(10)), ...(v18 && { weight: 1, model_mapping: null }) },
    ];
    await db.insertInto('channels').values(channels).execute();

    const conversationCount = messageCount === 0 ? 0 : Math.max(1, Math.ceil(messageCount / 6));
    const conversations = Array.from({ length: conversationCount }, (_, i) => {
      const created = when(300);
      return {
        id: i + 1,
        user_id: (i % userCount) + 1,
        title: i % 9 === 8 ? null : `About ${TOPICS[i % TOPICS.length]}`,
        model: models[i % 2],
        ...(v18 && { pinned: i % 5 === 0 ? 1 : 0, archived: i % 7 === 6 ? 1 : 0 }),
        created_at: sqlTime(created),
        updated_at: sqlTime(new Date(created.getTime() + 3_600_000)),
      };
    });
    await chunked(conversations, 200, (rows) => db.insertInto('conversations').values(rows).execute());

    // Files: one per user, plus a second upload of the first file's bytes (same content, another name).
    mkdirSync(options.uploads, { recursive: true });
    const files = users.map((u, i) => {
      const filename = i % 2 === 0 ? `notes-${u.id}.txt` : `plan-${u.id}.md`;
      return { id: i + 1, user_id: u.id, filename, content: `${filename}\n\n${paragraph(random)}\n${paragraph(random)}\n` };
    });
    files.push({ id: files.length + 1, user_id: Math.min(2, userCount), filename: 'copy-of-notes.txt', content: files[0]!.content });
    const fileRows = files.map((f, i) => {
      const created = when(300);
      const path = `${created.getUTCFullYear()}/${String(created.getUTCMonth() + 1).padStart(2, '0')}/${randomBytes(4).toString('hex')}-${f.filename}`;
      const bytes = Buffer.from(f.content);
      mkdirSync(dirname(join(options.uploads, path)), { recursive: true });
      writeFileSync(join(options.uploads, path), bytes);
      return {
        id: f.id,
        user_id: f.user_id,
        filename: f.filename,
        path,
        ...(v17 && { content_type: f.filename.endsWith('.md') ? 'text/markdown' : 'text/plain' }),
        size: bytes.length,
        // 1.9 computed checksums for new uploads only: older rows have none.
        ...(v19 && { sha256: i % 2 === 1 ? createHash('sha256').update(bytes).digest('hex') : null }),
        created_at: sqlTime(created),
      };
    });
    await db.insertInto('files').values(fileRows).execute();

    // Messages: a system prompt in every fourth conversation, then user/assistant turns.
    const messages = [];
    const perConversation = new Map<number, number>();
    for (let i = 0; i < messageCount; i++) {
      const conversation = conversations[i % conversationCount]!;
      const turn = perConversation.get(conversation.id) ?? 0;
      perConversation.set(conversation.id, turn + 1);
      const role = turn === 0 && conversation.id % 4 === 0 ? 'system' : (turn + (conversation.id % 4 === 0 ? 1 : 0)) % 2 === 0 ? 'user' : 'assistant';
      messages.push({ id: i + 1, conversation_id: conversation.id, role, content: role === 'system' ? 'You are a concise assistant.' : paragraph(random), model: role === 'assistant' ? conversation.model : null, created_at: sqlTime(when(300)) });
    }
    if (v19) {
      // Each user's own file is attached to the first user message in one of their conversations.
      const rows = messages as Array<(typeof messages)[number] & { file_ids?: string | null }>;
      for (const row of rows) row.file_ids = null;
      for (const file of fileRows.slice(0, userCount)) {
        const target = rows.find((m) => m.role === 'user' && conversations[m.conversation_id - 1]!.user_id === file.user_id);
        if (target) target.file_ids = JSON.stringify([file.id]);
      }
    }
    await chunked(messages, 300, (rows) => db.insertInto('messages').values(rows).execute());

    // API keys: one per user, and a revoked one of the admin's.
    const sampleKey = legacyKeySecret();
    const keys = users.map((u, i) => ({ id: i + 1, user_id: u.id, name: u.id === 1 ? 'laptop' : 'default', secret: u.id === 1 ? sampleKey : legacyKeySecret(), revoked: 0, expires_at: u.id === 2 ? sqlTime(new Date(Date.UTC(2099, 0, 1))) : null }));
    keys.push({ id: keys.length + 1, user_id: 1, name: 'old ci key', secret: legacyKeySecret(), revoked: 1, expires_at: null });
    const keyRows = keys.map((k) => ({
      id: k.id,
      user_id: k.user_id,
      name: k.name,
      ...(v17 ? { key_hash: createHash('sha256').update(k.secret).digest('hex'), key_prefix: k.secret.slice(0, 8) } : { key: k.secret }),
      ...(v18 && { expires_at: k.expires_at }),
      revoked: k.revoked,
      last_used_at: random() < 0.5 ? sqlTime(when(300)) : null,
      created_at: sqlTime(when(60)),
    }));
    await chunked(keyRows, 200, (rows) => db.insertInto('api_keys').values(rows).execute());

    const presets = [
      { id: 1, user_id: null, name: 'Translator', system_prompt: 'Translate what the user writes into English, keeping the tone.', model: null, temperature: 0.2, description: 'Any language to English', visibility: 'team' },
      { id: 2, user_id: null, name: 'Code reviewer', system_prompt: 'Review the code the user pastes: bugs first, then style.', model: 'gpt-4o', temperature: null, description: null, visibility: 'team' },
      { id: 3, user_id: 1, name: 'My writing style', system_prompt: 'Answer in short sentences. No jargon.', model: 'gpt-4o-mini', temperature: 0.7, description: null, visibility: 'private' },
    ].map(({ description, visibility, ...p }) => ({ ...p, created_at: sqlTime(when(60)), ...(v19 && { description, visibility }) }));
    await db.insertInto('presets').values(presets).execute();

    if (dialect === 'postgres') {
      // Rows were written with their ids: move the sequences past them, as the application's inserts would have.
      for (const table of ['users', 'channels', 'conversations', 'messages', 'files', 'api_keys', 'presets']) {
        await sql`select setval(pg_get_serial_sequence(${table}, 'id'), greatest(1, (select coalesce(max(id), 0) from ${sql.table(table)})))`.execute(db);
      }
    }

    return {
      version,
      database: database.display,
      uploads: options.uploads,
      counts: { users: users.length, admins, channels: channels.length, conversations: conversations.length, messages: messages.length, files: fileRows.length, api_keys: keyRows.length, presets: presets.length },
      admin: { email: 'admin@example.com', password: adminPassword },
      sample_key: sampleKey,
      models,
    };
  } finally {
    await database.close();
  }
}
