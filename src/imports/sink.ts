/**
 * The one way data from another installation enters Switchyard (`switchyard upgrade` from v1.x,
 * `switchyard import one-api|new-api`): every row becomes the same command an admin or user would
 * have sent, so it lands as events and every projection sees it like any other.
 *
 * Ids are derived from the source and the legacy id (sha256), so a run that crashed half-way is
 * simply run again: what exists already is reported as `created: false` and nothing is doubled.
 * Secrets: channel keys are sealed, API keys arrive as (or are reduced to) their hash here and
 * never reach a log line.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import { createApp, type App } from '../app.js';
import { isPasswordHash } from '../auth/passwords.js';
import { channels } from '../commands/channels/decider.js';
import { ChannelSettings } from '../commands/channels/events.js';
import { createChannel } from '../commands/channels/names.js';
import { conversations } from '../commands/conversations/decider.js';
import { credits } from '../commands/credits/decider.js';
import { files } from '../commands/files/decider.js';
import { streamName, type Decider, type DomainEvent } from '../commands/decider.js';
import { apiKeys } from '../commands/keys/decider.js';
import { KeyPolicy, unrestrictedPolicy } from '../commands/keys/events.js';
import { normalizeContent, type PresetVisibility } from '../commands/presets/content.js';
import { presets } from '../commands/presets/decider.js';
import { DEFAULT_TENANT, tenants } from '../commands/tenants/decider.js';
import { createUser } from '../commands/users/create-user.js';
import { normalizeEmail, users } from '../commands/users/decider.js';
import type { Config } from '../config.js';
import { ConversationTexts, messageField, TITLE } from '../conversations/texts.js';
import { maskSecret } from '../crypto/secret-box.js';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';
import { hashKey } from '../relay/access/key-gate.js';
import type { ChannelType } from '../relay/channel.js';

export type ImportSource = 'switchyard-1' | 'one-api' | 'new-api';
export type ImportKind = 'user' | 'channel' | 'key' | 'preset' | 'conversation' | 'message' | 'file';

/** What a row became; `created: false` when it was there already (a re-run). */
export interface Imported {
  id: string;
  created: boolean;
  /** The name it got when the source's was taken (channels). */
  name?: string;
}

/** A row that cannot be imported (its owner is missing, a field is invalid); callers report it and go on. */
export class ImportError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'ImportError';
  }
}

type LegacyId = string | number;

export interface ImportedUser {
  legacyId: LegacyId;
  email: string;
  /** bcrypt ($2a$/$2b$/$2y$, verified at login and replaced by scrypt) or Switchyard's scrypt. */
  passwordHash: string;
  role: 'admin' | 'user';
  disabled?: boolean;
  preferences?: Record<string, unknown>;
}

export interface ImportedChannel {
  legacyId: LegacyId;
  name: string;
  type: ChannelType;
  /** In the clear: sealed here. */
  key: string;
  base_url: string | null;
  models: string[];
  model_mapping: Record<string, string>;
  priority: number;
  weight: number;
  enabled: boolean;
  config?: Record<string, unknown>;
}

export interface ImportedKey {
  legacyId: LegacyId;
  legacyUserId: LegacyId;
  name: string;
  /** The secret as clients send it (e.g. `sk-…`): hashed here, never stored or logged. */
  secret?: string;
  /** sha256 hex of that secret, when the source keeps only the hash. */
  keyHash?: string;
  keyPrefix?: string;
  policy?: Partial<KeyPolicy>;
  revoked?: boolean;
}

export interface ImportedPreset {
  legacyId: LegacyId;
  /** null: a shared preset with no owner in the source (owned by the first imported admin). */
  legacyUserId: LegacyId | null;
  name: string;
  description?: string;
  system_prompt: string;
  model?: string | null;
  temperature?: number | null;
  visibility?: PresetVisibility;
}

export interface ImportedConversation {
  legacyId: LegacyId;
  legacyUserId: LegacyId;
  title: string | null;
  model?: string | null;
  pinned?: boolean;
  archived?: boolean;
  /** Kept only in reports: events are dated when they are appended. */
  createdAt?: string;
}

export interface ImportedMessage {
  legacyId: LegacyId;
  legacyConversationId: LegacyId;
  role: 'system' | 'user' | 'assistant';
  content: string;
  model?: string | null;
  createdAt?: string;
  legacyFileIds?: LegacyId[];
}

export interface ImportedFile {
  legacyId: LegacyId;
  legacyUserId: LegacyId;
  filename: string;
  contentType?: string;
  /** Where the bytes are. */
  path: string;
  createdAt?: string;
}

export interface ImportSink {
  readonly tenantId: string;
  /** The Switchyard id a legacy row gets (the same on every run). */
  idOf(kind: ImportKind, legacyId: LegacyId): string;
  user(u: ImportedUser): Promise<Imported>;
  /** A one-time top-up (a second run finds the user's credits stream written and adds nothing). */
  credits(c: { legacyUserId: LegacyId; amountMicro: number; reason: string }): Promise<Imported>;
  channel(c: ImportedChannel): Promise<Imported>;
  apiKey(k: ImportedKey): Promise<Imported>;
  preset(p: ImportedPreset): Promise<Imported>;
  conversation(c: ImportedConversation): Promise<Imported>;
  message(m: ImportedMessage): Promise<Imported>;
  file(f: ImportedFile): Promise<Imported>;
  /** Waits until every projection shows what was imported, then closes the stores. */
  close(): Promise<void>;
}

export interface ImportSinkOptions {
  source: ImportSource;
  tenantId?: string;
  /** Nothing is written: the methods answer what they would do (`created: true` for what is missing). */
  dryRun?: boolean;
}

/** How long close() waits for the projections to show an import. */
const PROJECTION_WAIT_MS = 15 * 60_000;

const ID_PREFIX: Record<ImportKind, string> = { user: 'usr_', channel: 'ch_', key: 'key_', preset: 'pst_', conversation: 'conv_', message: 'msg_', file: 'file-' };

/** `<prefix><24 url-safe chars of sha256(source/kind/legacy id)>`: stable across runs, distinct per source. */
export function importedId(source: ImportSource, kind: ImportKind, legacyId: LegacyId): string {
  const digest = createHash('sha256').update(`${source}\u0000${kind}\u0000${String(legacyId)}`).digest('base64url').replace(/[-_]/g, 'x');
  return `${ID_PREFIX[kind]}imp${digest.slice(0, 24)}`;
}

/** Full policy from a partial one: a missing field means "no restriction", as for a key created without it. */
export function keyPolicyOf(partial: Partial<KeyPolicy> = {}): KeyPolicy {
  return KeyPolicy.parse({
    ...unrestrictedPolicy(),
    ...partial,
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDecider = Decider<any, any, any>;

function codeOf(error: unknown): string | null {
  return error instanceof AppError ? error.code : null;
}

/** Opens Switchyard as the environment configures it (bootstrapped, projectors running) and writes into it. */
export async function openImportSink(config: Config, logger: Logger, options: ImportSinkOptions): Promise<ImportSink> {
  // <PROVIDER>_API_KEY channels are for a first start; an import brings its own channels.
  // A dry run appends nothing, not even what a first start would (the root admin, built-in presets).
  const app = await createApp({ ...config, defaultChannels: [] }, logger, { noStartupWrites: options.dryRun ?? false });
  // Rows of a tenant that does not exist would be nobody's to see (the default one is made at the first start).
  const tenantId = options.tenantId ?? DEFAULT_TENANT;
  if (tenantId !== DEFAULT_TENANT && (await app.ctx.store.readStream(streamName(tenants.category, tenantId))).length === 0) {
    await app.close();
    throw new ImportError(`no tenant "${tenantId}" (create it first: POST /v1/admin/tenants)`, 'unknown_tenant');
  }
  return new AppImportSink(app, options);
}

class AppImportSink implements ImportSink {
  readonly tenantId: string;
  private readonly source: ImportSource;
  private readonly dryRun: boolean;
  /** legacy user id -> Switchyard user id (an email already in Switchyard maps to that user). */
  private readonly userIds = new Map<string, string>();
  private readonly conversationOwners = new Map<string, string>();
  private firstAdmin: string | null = null;
  private lastPosition = 0;
  private readonly texts: ConversationTexts;

  constructor(
    private readonly app: App,
    options: ImportSinkOptions,
  ) {
    this.tenantId = options.tenantId ?? DEFAULT_TENANT;
    this.source = options.source;
    this.dryRun = options.dryRun ?? false;
    this.texts = new ConversationTexts(app.ctx.dataKeys);
  }

  idOf(kind: ImportKind, legacyId: LegacyId): string {
    return importedId(this.source, kind, legacyId);
  }

  private get ctx() {
    return this.app.ctx;
  }

  private async exists(decider: AnyDecider, id: string): Promise<boolean> {
    return (await this.ctx.store.readStream(streamName(decider.category, id))).length > 0;
  }

  /** Runs a creating command; "already exists" (a re-run) is `created: false`. */
  private async create<C, S, E extends DomainEvent>(decider: Decider<C, S, E>, id: string, command: C, existsCode: string): Promise<Imported> {
    if (this.dryRun) return { id, created: !(await this.exists(decider, id)) };
    try {
      const result = await this.ctx.commands.execute(decider, id, command, { tenantId: this.tenantId, causationId: `import-${this.source}` });
      if (result.position !== null) this.lastPosition = Math.max(this.lastPosition, result.position);
      return { id, created: result.events.length > 0 };
    } catch (error) {
      if (codeOf(error) === existsCode) return { id, created: false };
      throw error;
    }
  }

  private ownerOf(legacyUserId: LegacyId, what: string): string {
    const id = this.userIds.get(String(legacyUserId));
    if (!id) throw new ImportError(`${what}: its user ${legacyUserId} was not imported`, 'unknown_user');
    return id;
  }

  async user(u: ImportedUser): Promise<Imported> {
    const email = normalizeEmail(u.email);
    if (!email.includes('@')) throw new ImportError(`user ${u.legacyId}: "${u.email}" is not an email address`, 'invalid_email');
    if (!isPasswordHash(u.passwordHash)) throw new ImportError(`user ${u.legacyId}: the password hash is neither bcrypt nor scrypt`, 'invalid_password_hash');
    const id = this.idOf('user', u.legacyId);
    const known = await this.ctx.queries.userByEmail(email);
    if (known && known.id !== id) {
      // The same person already has an account here (e.g. the root admin): their rows join it.
      if (known.tenant_id !== this.tenantId) throw new ImportError(`user ${u.legacyId}: ${email} belongs to another tenant`, 'email_taken');
      this.userIds.set(String(u.legacyId), known.id);
      if (u.role === 'admin') this.firstAdmin ??= known.id;
      return { id: known.id, created: false };
    }
    this.userIds.set(String(u.legacyId), id);
    if (u.role === 'admin') this.firstAdmin ??= id;
    if (this.dryRun) return { id, created: !(await this.exists(users, id)) };
    let created = true;
    try {
      const position = await createUser(this.ctx.commands, { userId: id, tenantId: this.tenantId, email, passwordHash: u.passwordHash, role: u.role }, `import-${this.source}`);
      if (position !== null) this.lastPosition = Math.max(this.lastPosition, position);
    } catch (error) {
      // A re-run: the reservation is this user's and the user exists.
      if (codeOf(error) !== 'user_exists' && codeOf(error) !== 'email_taken') throw error;
      created = false;
    }
    // Follow-up state is idempotent: the deciders answer nothing when it is already so.
    if (u.disabled) await this.run(users, id, { type: 'DisableUser', by: null });
    if (u.preferences && Object.keys(u.preferences).length > 0) await this.run(users, id, { type: 'SetPreferences', preferences: u.preferences });
    return { id, created };
  }

  private async run<C, S, E extends DomainEvent>(decider: Decider<C, S, E>, id: string, command: C): Promise<void> {
    const result = await this.ctx.commands.execute(decider, id, command, { tenantId: this.tenantId, causationId: `import-${this.source}` });
    if (result.position !== null) this.lastPosition = Math.max(this.lastPosition, result.position);
  }

  async credits(c: { legacyUserId: LegacyId; amountMicro: number; reason: string }): Promise<Imported> {
    const userId = this.ownerOf(c.legacyUserId, 'credits');
    if (!Number.isSafeInteger(c.amountMicro) || c.amountMicro <= 0) throw new ImportError(`credits of user ${c.legacyUserId}: ${c.amountMicro} micro-credits is not a positive amount`, 'invalid_amount');
    // Only into an untouched credits stream: a re-run (or a user who already had credits here) gets nothing twice.
    if (await this.exists(credits, userId)) return { id: userId, created: false };
    if (this.dryRun) return { id: userId, created: true };
    await this.run(credits, userId, { type: 'TopUpCredits', userId, amountMicro: c.amountMicro, reason: c.reason, by: null });
    return { id: userId, created: true };
  }

  async channel(c: ImportedChannel): Promise<Imported> {
    const id = this.idOf('channel', c.legacyId);
    const parsed = ChannelSettings.safeParse({ name: c.name, type: c.type, base_url: c.base_url, models: c.models, model_mapping: c.model_mapping, priority: c.priority, weight: c.weight, enabled: c.enabled, config: c.config ?? {} });
    if (!parsed.success) throw new ImportError(`channel ${c.legacyId} (${c.name}): ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`, 'invalid_channel');
    if (!c.key) throw new ImportError(`channel ${c.legacyId} (${c.name}): no key`, 'invalid_channel');
    if (await this.exists(channels, id)) return { id, created: false };
    if (this.dryRun) return { id, created: true };
    const key = { sealed: this.ctx.secrets.seal(c.key), masked: maskSecret(c.key) };
    // Names are unique in a tenant here, not in the source: a second "main" becomes "main (12)".
    const suffix = ` (${c.legacyId})`;
    for (const name of [c.name, `${c.name.slice(0, 100 - suffix.length)}${suffix}`]) {
      try {
        const result = await createChannel(this.ctx.commands, { type: 'CreateChannel', channelId: id, settings: { ...parsed.data, name }, key }, this.context(), this.existingChannels);
        if (result.position !== null) this.lastPosition = Math.max(this.lastPosition, result.position);
        return { id, created: result.events.length > 0, ...(name === c.name ? {} : { name }) };
      } catch (error) {
        if (codeOf(error) === 'channel_name_taken') continue;
        if (codeOf(error) === 'channel_exists') return { id, created: false };
        if (codeOf(error) === 'invalid_channel') throw new ImportError(`channel ${c.legacyId} (${c.name}): ${(error as Error).message}`, 'invalid_channel');
        throw error;
      }
    }
    throw new ImportError(`channel ${c.legacyId} (${c.name}): a channel named "${c.name}" and one named "${c.name}${suffix}" exist already`, 'channel_name_taken');
  }

  private context() {
    return { tenantId: this.tenantId, causationId: `import-${this.source}` };
  }

  private readonly existingChannels = async () => this.ctx.queries.channels(this.tenantId);

  async apiKey(k: ImportedKey): Promise<Imported> {
    const userId = this.ownerOf(k.legacyUserId, `key ${k.legacyId}`);
    const keyHash = k.secret !== undefined ? hashKey(k.secret) : k.keyHash;
    if (!keyHash || !/^[0-9a-f]{64}$/.test(keyHash)) throw new ImportError(`key ${k.legacyId}: neither a secret nor a sha256 hash`, 'invalid_key');
    const keyPrefix = k.keyPrefix ?? (k.secret !== undefined ? k.secret.slice(0, 8) : 'sk-…');
    let policy: KeyPolicy;
    try {
      policy = keyPolicyOf(k.policy);
    } catch (error) {
      throw new ImportError(`key ${k.legacyId}: ${(error as Error).message}`, 'invalid_key');
    }
    const id = this.idOf('key', k.legacyId);
    let result: Imported;
    try {
      result = await this.create(apiKeys, id, { type: 'CreateApiKey', keyId: id, name: k.name || `imported key ${k.legacyId}`, userId, keyHash, keyPrefix, policy }, 'key_exists');
    } catch (error) {
      if (error instanceof AppError && error.status === 400) throw new ImportError(`key ${k.legacyId}: ${error.message}`, error.code);
      throw error;
    }
    if (k.revoked && !this.dryRun) {
      try {
        await this.run(apiKeys, id, { type: 'RevokeApiKey', by: null });
      } catch (error) {
        if (codeOf(error) !== 'key_not_found') throw error; // revoked by the previous run
      }
    }
    return result;
  }

  async preset(p: ImportedPreset): Promise<Imported> {
    const owner = p.legacyUserId === null ? this.firstAdmin : this.ownerOf(p.legacyUserId, `preset ${p.legacyId}`);
    if (!owner) throw new ImportError(`preset ${p.legacyId}: no owner and no admin imported to own it`, 'unknown_user');
    const id = this.idOf('preset', p.legacyId);
    const content = normalizeContent({
      name: p.name,
      description: p.description ?? '',
      avatar: '',
      tags: [],
      category: null,
      lang: null,
      context: [],
      model_preferences: p.model ? [p.model] : [],
      temperature: p.temperature ?? null,
      max_tokens: null,
      system_prompt: p.system_prompt,
      visibility: p.visibility ?? (p.legacyUserId === null ? 'team' : 'private'),
    });
    return this.create(presets, id, { type: 'CreatePreset', presetId: id, ownerId: owner, content, clonedFrom: null }, 'preset_exists');
  }

  async conversation(c: ImportedConversation): Promise<Imported> {
    const userId = this.ownerOf(c.legacyUserId, `conversation ${c.legacyId}`);
    const id = this.idOf('conversation', c.legacyId);
    this.conversationOwners.set(String(c.legacyId), userId);
    if (this.dryRun) return { id, created: !(await this.exists(conversations, id)) };
    const seal = await this.texts.sealerFor({ userId }, id);
    const result = await this.create(
      conversations,
      id,
      { type: 'StartConversation', conversationId: id, tenantId: this.tenantId, userId, title: c.title ? seal(TITLE, c.title) : null, settings: { model: c.model ?? null } },
      'conversation_exists',
    );
    if (c.pinned) await this.run(conversations, id, { type: 'PinConversation' });
    if (c.archived) await this.run(conversations, id, { type: 'ArchiveConversation' });
    return result;
  }

  async message(m: ImportedMessage): Promise<Imported> {
    const userId = this.conversationOwners.get(String(m.legacyConversationId));
    if (!userId) throw new ImportError(`message ${m.legacyId}: its conversation ${m.legacyConversationId} was not imported`, 'unknown_conversation');
    const conversationId = this.idOf('conversation', m.legacyConversationId);
    const id = this.idOf('message', m.legacyId);
    if (this.dryRun) return { id, created: true };
    const content = await this.texts.seal({ userId }, conversationId, messageField(id), m.content);
    const fileIds = (m.legacyFileIds ?? []).map((f) => this.idOf('file', f));
    // AppendMessage with an id the stream has is a retried command: it appends nothing.
    const result = await this.ctx.commands.execute(
      conversations,
      conversationId,
      { type: 'AppendMessage', messageId: id, role: m.role, content, modelRequested: m.model ?? null, modelServed: m.role === 'assistant' ? (m.model ?? null) : null, fileIds },
      { tenantId: this.tenantId, causationId: `import-${this.source}` },
    );
    if (result.position !== null) this.lastPosition = Math.max(this.lastPosition, result.position);
    return { id, created: result.events.length > 0 };
  }

  async file(f: ImportedFile): Promise<Imported> {
    const userId = this.ownerOf(f.legacyUserId, `file ${f.legacyId}`);
    const id = this.idOf('file', f.legacyId);
    if (await this.exists(files, id)) return { id, created: false };
    if (this.dryRun) return { id, created: true };
    const service = this.ctx.files.service;
    const received = await service.receive(createReadStream(f.path), await service.quotaLeft(this.tenantId)).catch((error: unknown) => {
      throw new ImportError(`file ${f.legacyId} (${basename(f.path)}): ${(error as Error).message}`, 'file_unreadable');
    });
    const row = await service.create({ tenantId: this.tenantId, userId }, received, f.filename, 'assistants', `import-${this.source}`, id);
    return { id: row.id, created: true };
  }

  async close(): Promise<void> {
    try {
      // A large import leaves the projectors minutes behind on a busy database: wait for them (bounded).
      if (this.lastPosition > 0) await Promise.all([this.ctx.runner.waitFor(this.lastPosition, { timeoutMs: PROJECTION_WAIT_MS }), this.ctx.views.waitFor(this.lastPosition, PROJECTION_WAIT_MS)]);
    } finally {
      await this.app.close();
    }
  }
}
