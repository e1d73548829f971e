/**
 * Presets read model (`presets`): user presets and built-ins in one table, for reads, search and
 * sync. Deleted user presets stay as tombstones (`deleted` = 1) with the position of their
 * deletion, so a device syncing from a cursor learns of it. Built-ins are upserted on each
 * BuiltinPresetPublished.
 */
import type { PresetVisibility } from '../commands/presets/content.js';
import { SYSTEM_TENANT } from '../commands/presets/decider.js';
import { BuiltinPresetPublished, PRESET_EVENT_TYPES, PresetEvent, type PresetContentData } from '../commands/presets/events.js';
import type { StoredEvent } from '../ports/event-store.js';
import type { Projection, ReadModelDb } from './runtime/projection.js';

/** The content column (`data`): what the preset says, plus its visibility. */
export type PresetDocument = PresetContentData & { visibility: PresetVisibility };

/** The lower-cased text search looks in; fields are separated by newlines (terms never contain one). */
export function searchTextOf(doc: PresetContentData): string {
  return [doc.name, doc.description, ...doc.tags, doc.system_prompt ?? '', ...doc.context.map((m) => m.content)].join('\n').toLowerCase();
}

export function tagsTextOf(tags: readonly string[]): string {
  return tags.length === 0 ? '' : `\n${tags.map((t) => t.toLowerCase()).join('\n')}\n`;
}

function columnsOf(doc: PresetDocument) {
  return {
    visibility: doc.visibility,
    category: doc.category,
    lang: doc.lang,
    name: doc.name,
    description: doc.description,
    tags_text: tagsTextOf(doc.tags),
    search_text: searchTextOf(doc),
    data: JSON.stringify(doc),
  };
}

function contentOf<T extends PresetContentData>(data: T): PresetContentData {
  return {
    name: data.name,
    description: data.description,
    avatar: data.avatar,
    tags: data.tags,
    category: data.category,
    lang: data.lang,
    context: data.context,
    model_preferences: data.model_preferences,
    temperature: data.temperature,
    max_tokens: data.max_tokens,
    system_prompt: data.system_prompt,
  };
}

export const presetIdOf = (stream: string) => stream.slice('preset-'.length);

export const presetsProjection: Projection = {
  name: 'presets',
  version: 1,
  eventTypes: PRESET_EVENT_TYPES,
  async apply(trx, stored) {
    if (stored.type === 'BuiltinPresetPublished') return publishBuiltin(trx, stored);
    const event = PresetEvent.parse({ type: stored.type, data: stored.data });
    const id = presetIdOf(stored.stream);
    switch (event.type) {
      case 'PresetCreated': {
        const doc: PresetDocument = { ...contentOf(event.data), visibility: event.data.visibility as PresetVisibility };
        await trx
          .insertInto('presets')
          .values({
            id,
            tenant_id: stored.tenant_id,
            owner_id: event.data.owner_id,
            builtin: 0,
            ...columnsOf(doc),
            version: null,
            revision: stored.version,
            cloned_from: event.data.cloned_from,
            deleted: 0,
            created_position: stored.position,
            position: stored.position,
            created_at: stored.occurred_at,
            updated_at: stored.occurred_at,
            deleted_at: null,
          })
          .execute();
        return;
      }
      case 'PresetUpdated': {
        const row = await trx.selectFrom('presets').select('data').where('id', '=', id).executeTakeFirst();
        if (!row) return;
        const changes = Object.fromEntries(Object.entries(event.data).filter(([, v]) => v !== undefined));
        const doc = { ...(JSON.parse(row.data) as PresetDocument), ...changes } as PresetDocument;
        await trx
          .updateTable('presets')
          .set({ ...columnsOf(doc), revision: stored.version, position: stored.position, updated_at: stored.occurred_at })
          .where('id', '=', id)
          .execute();
        return;
      }
      case 'PresetDeleted':
        await trx
          .updateTable('presets')
          .set({ deleted: 1, deleted_at: stored.occurred_at, revision: stored.version, position: stored.position, updated_at: stored.occurred_at, search_text: '' })
          .where('id', '=', id)
          .execute();
        return;
    }
  },
  async reset(trx) {
    await trx.deleteFrom('presets').execute();
  },
};

async function publishBuiltin(trx: ReadModelDb, stored: StoredEvent) {
  const { data } = BuiltinPresetPublished.parse({ type: stored.type, data: stored.data });
  const doc: PresetDocument = { ...contentOf(data), visibility: 'public' };
  const existing = await trx.selectFrom('presets').select('revision').where('id', '=', data.preset_id).executeTakeFirst();
  if (existing) {
    await trx
      .updateTable('presets')
      .set({ ...columnsOf(doc), version: data.version, revision: existing.revision + 1, position: stored.position, updated_at: stored.occurred_at })
      .where('id', '=', data.preset_id)
      .execute();
    return;
  }
  await trx
    .insertInto('presets')
    .values({
      id: data.preset_id,
      tenant_id: SYSTEM_TENANT,
      owner_id: null,
      builtin: 1,
      ...columnsOf(doc),
      version: data.version,
      revision: 1,
      cloned_from: null,
      deleted: 0,
      created_position: stored.position,
      position: stored.position,
      created_at: stored.occurred_at,
      updated_at: stored.occurred_at,
      deleted_at: null,
    })
    .execute();
}
