/**
 * 2.0.0, data part: the rows of the (now 1.9-shaped, roles added) legacy database go into
 * Switchyard through the import sink, as events. Owners before what they own, conversations
 * before their messages, files before the messages that attach them. Every row is offered again
 * on a re-run: the sink's ids are derived from the legacy ids, so what is there already is
 * counted as such and nothing is doubled. Rows the sink refuses are counted and named, not fatal.
 */
import { join } from 'node:path';
import { ChannelType } from '../relay/channel.js';
import { ImportError, type Imported, type ImportSink } from '../imports/sink.js';
import { isoTime } from './legacy/schema.js';
import { countRows, pagesOf, type StepContext } from './steps.js';

export type ImportKindName = 'users' | 'channels' | 'presets' | 'api_keys' | 'files' | 'conversations' | 'messages';

export interface KindTally {
  created: number;
  existing: number;
  skipped: number;
}

export interface ImportTally {
  kinds: Record<ImportKindName, KindTally>;
  /** Why rows were skipped (ImportError messages: ids and names, never secrets). */
  problems: string[];
}

export const IMPORT_ORDER: ImportKindName[] = ['users', 'channels', 'presets', 'api_keys', 'files', 'conversations', 'messages'];

const flag = (value: unknown) => Number(value) === 1;

/** `a, b ,c` -> ['a', 'b', 'c']. */
export function splitModels(text: unknown): string[] {
  return String(text ?? '')
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m.length > 0);
}

/** A JSON object of strings from a TEXT column; {} when empty or not such an object. */
export function parseMapping(text: unknown): Record<string, string> {
  if (typeof text !== 'string' || text.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
    return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return {};
  }
}

/** messages.file_ids (a JSON array of numbers) -> the ids; [] when empty or malformed. */
export function parseFileIds(text: unknown): number[] {
  if (typeof text !== 'string' || text.trim() === '') return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.map(Number).filter((n) => Number.isInteger(n)) : [];
  } catch {
    return [];
  }
}

export function messageRole(role: unknown): 'system' | 'user' | 'assistant' | null {
  return role === 'system' || role === 'user' || role === 'assistant' ? role : null;
}

/** The row counts the import would go through (for the dry run and the progress totals). */
export async function importCounts(ctx: Pick<StepContext, 'db'>): Promise<Record<ImportKindName, number>> {
  const entries = await Promise.all(IMPORT_ORDER.map(async (kind) => [kind, await countRows(ctx.db, kind)] as const));
  return Object.fromEntries(entries) as Record<ImportKindName, number>;
}

export async function importIntoSwitchyard(ctx: StepContext, sink: ImportSink, missingFiles: Set<number>): Promise<ImportTally> {
  const tally: ImportTally = { kinds: Object.fromEntries(IMPORT_ORDER.map((k) => [k, { created: 0, existing: 0, skipped: 0 }])) as ImportTally['kinds'], problems: [] };
  const totals = await importCounts(ctx);
  const admins = new Set((await ctx.db.selectFrom('user_roles').select('user_id').where('role_id', '=', 1).execute()).map((r) => Number(r.user_id)));
  const importedFiles = new Set<number>();

  const each = async (kind: ImportKindName, one: (row: Record<string, any>) => Promise<Imported | null>) => { // eslint-disable-line @typescript-eslint/no-explicit-any
    ctx.say(`2.0.0: importing ${totals[kind]} ${kind.replace('_', ' ')}`);
    const bar = ctx.progress(`2.0.0 ${kind.replace('_', ' ')}`, totals[kind]);
    const counts = tally.kinds[kind];
    for await (const page of pagesOf(ctx.db, kind, 500)) {
      for (const row of page) {
        try {
          const result = await one(row);
          if (result === null) counts.skipped++;
          else if (result.created) counts.created++;
          else counts.existing++;
        } catch (error) {
          if (!(error instanceof ImportError)) throw error;
          counts.skipped++;
          tally.problems.push(error.message);
        }
        bar.tick();
      }
    }
    bar.finish();
  };

  await each('users', (u) =>
    sink.user({ legacyId: Number(u.id), email: String(u.email), passwordHash: String(u.password_hash), role: admins.has(Number(u.id)) ? 'admin' : 'user', disabled: flag(u.disabled) }),
  );
  await each('channels', async (c) => {
    const type = ChannelType.safeParse(String(c.type));
    if (!type.success) throw new ImportError(`channel ${c.id} (${c.name}): type "${c.type}" is not a Switchyard provider kind`, 'invalid_channel');
    return sink.channel({
      legacyId: Number(c.id),
      name: String(c.name),
      type: type.data,
      key: String(c.api_key ?? ''),
      base_url: c.base_url ? String(c.base_url) : null,
      models: splitModels(c.models),
      model_mapping: parseMapping(c.model_mapping),
      priority: Number(c.priority ?? 0),
      weight: Math.max(1, Number(c.weight ?? 1)),
      enabled: flag(c.enabled),
    });
  });
  await each('presets', (p) =>
    sink.preset({
      legacyId: Number(p.id),
      legacyUserId: p.user_id === null || p.user_id === undefined ? null : Number(p.user_id),
      name: String(p.name),
      description: p.description ? String(p.description) : undefined,
      system_prompt: String(p.system_prompt),
      model: p.model ? String(p.model) : null,
      temperature: p.temperature === null || p.temperature === undefined ? null : Number(p.temperature),
      visibility: p.visibility === 'team' || p.visibility === 'public' || p.visibility === 'private' ? p.visibility : undefined,
    }),
  );
  await each('api_keys', (k) =>
    sink.apiKey({
      legacyId: Number(k.id),
      legacyUserId: Number(k.user_id),
      name: String(k.name),
      keyHash: String(k.key_hash ?? ''),
      keyPrefix: k.key_prefix ? String(k.key_prefix) : undefined,
      policy: { expires_at: isoTime(k.expires_at) ?? null },
      revoked: flag(k.revoked),
    }),
  );
  await each('files', async (f) => {
    if (missingFiles.has(Number(f.id)) || !ctx.uploads) {
      tally.problems.push(`file ${f.id} (${f.filename}): not in the uploads directory (${f.path})`);
      return null;
    }
    const result = await sink.file({ legacyId: Number(f.id), legacyUserId: Number(f.user_id), filename: String(f.filename), contentType: f.content_type ? String(f.content_type) : undefined, path: join(ctx.uploads, String(f.path)), createdAt: isoTime(f.created_at) });
    importedFiles.add(Number(f.id));
    return result;
  });
  await each('conversations', (c) =>
    sink.conversation({ legacyId: Number(c.id), legacyUserId: Number(c.user_id), title: c.title ? String(c.title) : null, model: c.model ? String(c.model) : null, pinned: flag(c.pinned), archived: flag(c.archived), createdAt: isoTime(c.created_at) }),
  );
  await each('messages', async (m) => {
    const role = messageRole(m.role);
    if (!role) throw new ImportError(`message ${m.id}: role "${m.role}" is not system, user or assistant`, 'invalid_message');
    return sink.message({
      legacyId: Number(m.id),
      legacyConversationId: Number(m.conversation_id),
      role,
      content: String(m.content ?? ''),
      model: m.model ? String(m.model) : null,
      createdAt: isoTime(m.created_at),
      legacyFileIds: parseFileIds(m.file_ids).filter((id) => importedFiles.has(id)),
    });
  });
  return tally;
}
