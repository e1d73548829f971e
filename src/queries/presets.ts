/** Reads of the presets read model (src/projections/presets.ts): what a reader may see. */
import type { PresetsTable } from '../adapters/sql/schema.js';
import type { PresetDocument } from '../projections/presets.js';
import type { ReadModelDb } from '../projections/runtime/projection.js';

/** Who is reading: visibility is decided against the caller's tenant and user id. */
export interface PresetReader {
  tenantId: string;
  userId: string;
}

/**
 * The rows `reader` may see (deleted ones excluded): built-ins; public presets of any tenant; in
 * the reader's tenant, its own presets and the team's.
 */
export function visiblePresets(db: ReadModelDb, reader: PresetReader) {
  return db
    .selectFrom('presets')
    .where('deleted', '=', 0)
    .where((eb) =>
      eb.or([
        eb('builtin', '=', 1),
        eb('visibility', '=', 'public'),
        eb.and([eb('tenant_id', '=', reader.tenantId), eb.or([eb('owner_id', '=', reader.userId), eb('visibility', '=', 'team')])]),
      ]),
    );
}

/** A preset the reader may see, or undefined (missing, deleted, or not shared with the reader). */
export async function findVisiblePreset(db: ReadModelDb, reader: PresetReader, id: string): Promise<PresetsTable | undefined> {
  return visiblePresets(db, reader).selectAll().where('id', '=', id).executeTakeFirst();
}

export function presetDocument(row: Pick<PresetsTable, 'data'>): PresetDocument {
  return JSON.parse(row.data) as PresetDocument;
}
