/**
 * Presets: conversation templates. A user's preset is the aggregate `preset-<id>` in the owner's
 * tenant; only its owner changes or deletes it (anyone else sees what they would see for a missing
 * one: 404). The built-ins are one catalogue aggregate, `builtinpresets-catalog`, fed from the data
 * files at startup: a built-in is (re)published only when its file's version is newer than the
 * one in the log, so restarts and instances starting together publish each version once.
 */
import { AppError, NotFoundError } from '../../errors.js';
import type { Decider } from '../decider.js';
import { compareVersions, normalizeContent, type PresetContent, type PresetVisibility } from './content.js';
import { BuiltinPresetEvent, PresetEvent, type PresetContentData } from './events.js';
import { ownValue } from '../../own.js';

export interface PresetState {
  exists: boolean;
  deleted: boolean;
  ownerId: string | null;
  content: PresetContent | null;
  /** Events in the stream (= the stream's version): the preset's revision. */
  revision: number;
}

export type PresetCommand =
  | { type: 'CreatePreset'; presetId: string; ownerId: string; content: PresetContent; clonedFrom: string | null }
  | { type: 'UpdatePreset'; ownerId: string; changes: Partial<PresetContent>; /** If-Match: the revision the caller last saw. */ expectedRevision?: number }
  | { type: 'DeletePreset'; ownerId: string; by: string | null; expectedRevision?: number };

export class PreconditionFailedError extends AppError {
  constructor(message = 'the preset changed since the version given in If-Match') {
    super(412, 'invalid_request_error', 'precondition_failed', message);
  }
}

const notFound = () => new NotFoundError('preset not found', 'preset_not_found');

function live(state: PresetState, ownerId: string, expectedRevision: number | undefined): PresetContent {
  // Someone else's preset looks exactly like a missing one.
  if (!state.exists || state.deleted || !state.content || state.ownerId !== ownerId) throw notFound();
  if (expectedRevision !== undefined && expectedRevision !== state.revision) throw new PreconditionFailedError();
  return state.content;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export const presets: Decider<PresetCommand, PresetState, PresetEvent> = {
  category: 'preset',
  initialState: { exists: false, deleted: false, ownerId: null, content: null, revision: 0 },
  events: PresetEvent,

  decide(command, state) {
    switch (command.type) {
      case 'CreatePreset': {
        if (state.exists) throw new AppError(409, 'conflict_error', 'preset_exists', 'preset already exists');
        const content = normalizeContent(command.content);
        return [{ type: 'PresetCreated', data: { preset_id: command.presetId, owner_id: command.ownerId, cloned_from: command.clonedFrom, ...content } }];
      }
      case 'UpdatePreset': {
        const current = live(state, command.ownerId, command.expectedRevision);
        const merged = normalizeContent({ ...current, ...definedOnly(command.changes) });
        const changed: Partial<PresetContent> = {};
        for (const key of Object.keys(merged) as Array<keyof PresetContent>) {
          if (!same(merged[key], current[key])) (changed as Record<string, unknown>)[key] = merged[key];
        }
        return Object.keys(changed).length === 0 ? [] : [{ type: 'PresetUpdated', data: changed }];
      }
      case 'DeletePreset':
        live(state, command.ownerId, command.expectedRevision);
        return [{ type: 'PresetDeleted', data: { by: command.by } }];
    }
  },

  evolve(state, event) {
    const revision = state.revision + 1;
    switch (event.type) {
      case 'PresetCreated': {
        const { preset_id: _id, owner_id, cloned_from: _from, visibility, ...content } = event.data;
        return { exists: true, deleted: false, ownerId: owner_id, content: { ...content, visibility: visibility as PresetVisibility }, revision };
      }
      case 'PresetUpdated':
        return state.content ? { ...state, content: { ...state.content, ...(definedOnly(event.data) as Partial<PresetContent>) }, revision } : { ...state, revision };
      case 'PresetDeleted':
        return { ...state, deleted: true, revision };
    }
  },
};

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The catalogue of built-in presets (one stream for all of them). */
export const BUILTIN_CATALOG_ID = 'catalog';
/** Tenant of the catalogue stream: the installation, not any tenant. */
export const SYSTEM_TENANT = '_system';

export interface BuiltinCatalogState {
  /** preset id -> published version. */
  versions: Record<string, string>;
}

export interface BuiltinPresetInput {
  presetId: string;
  version: string;
  content: PresetContentData;
}

export type BuiltinCatalogCommand = { type: 'PublishBuiltinPresets'; presets: BuiltinPresetInput[] };

export const builtinPresets: Decider<BuiltinCatalogCommand, BuiltinCatalogState, BuiltinPresetEvent> = {
  category: 'builtinpresets',
  initialState: { versions: {} },
  events: BuiltinPresetEvent,

  decide(command, state) {
    const events: BuiltinPresetEvent[] = [];
    const seen = new Set<string>();
    for (const preset of command.presets) {
      if (seen.has(preset.presetId)) continue;
      seen.add(preset.presetId);
      const published = ownValue(state.versions, preset.presetId);
      // Only a newer version replaces what installations already have.
      if (published !== undefined && compareVersions(preset.version, published) <= 0) continue;
      events.push({ type: 'BuiltinPresetPublished', data: { preset_id: preset.presetId, version: preset.version, ...normalizeContent(preset.content) } });
    }
    return events;
  },

  evolve(state, event) {
    return { versions: { ...state.versions, [event.data.preset_id]: event.data.version } };
  },
};
