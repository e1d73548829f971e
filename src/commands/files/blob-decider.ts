/**
 * Blobs (issue 18): the aggregate `blob-<sha256>`, the stored bytes shared by every file with that
 * content, and the files referencing them. It exists so that "the bytes go when the last file using
 * them is deleted" holds across instances: every change is appended at the version it was decided
 * on (the command handler retries on a conflict with fresh history), so a reference and the last
 * release cannot both win.
 *
 * Life: absent -> stored (BlobStored, written by the first uploader after it copied the bytes) ->
 * purging (the last reference released: the releaser deletes the object) -> purged -> stored again
 * by a later upload. An upload meeting `purging` waits for `purged`; a purge older than
 * PURGE_STALE_MS counts as purged (its instance died between the two events).
 */
import { DomainError } from '../../errors.js';
import type { Decider } from '../decider.js';
import { BlobEvent } from './events.js';

export type BlobStatus = 'absent' | 'stored' | 'purging' | 'purged';

export interface BlobState {
  status: BlobStatus;
  storageKey: string | null;
  /** Files using the bytes. */
  refs: ReadonlySet<string>;
  /** When the purge began (ISO), while `purging`. */
  purgingSince: string | null;
}

/** A purge that has not ended after this long is taken as ended (its instance is gone). */
export const PURGE_STALE_MS = 30_000;

export type BlobCommand =
  /**
   * `fileId` uses the bytes. `stored`: the caller has just written them under `storageKey` (else
   * the blob must hold them already). `now`: ISO time, to judge a stale purge.
   */
  | { type: 'ReferenceBlob'; fileId: string; sha256: string; storageKey: string; bytes: number; stored: boolean; now: string }
  /** `fileId` no longer uses the bytes; the last release starts the purge. */
  | { type: 'ReleaseBlob'; fileId: string; now: string }
  /** The object is deleted: the purge is over. */
  | { type: 'FinishPurge' };

/** The bytes are not stored (never, or purged): write them, then reference with `stored: true`. */
export const blobAbsent = () => new DomainError('the blob holds no bytes: store them first', 'blob_absent');
/** Another instance is deleting the bytes: wait until it is done, then store them again. */
export const blobPurging = () => new DomainError('the blob is being purged', 'blob_purging');

function purgeIsOver(state: BlobState, now: string): boolean {
  return state.status === 'purged' || state.status === 'absent' || (state.status === 'purging' && state.purgingSince !== null && Date.parse(now) - Date.parse(state.purgingSince) > PURGE_STALE_MS);
}

export const blobs: Decider<BlobCommand, BlobState, BlobEvent> = {
  category: 'blob',
  initialState: { status: 'absent', storageKey: null, refs: new Set(), purgingSince: null },
  events: BlobEvent,

  decide(command, state) {
    switch (command.type) {
      case 'ReferenceBlob': {
        const referenced: BlobEvent = { type: 'BlobReferenced', data: { file_id: command.fileId } };
        if (state.status === 'stored') return state.refs.has(command.fileId) ? [] : [referenced];
        if (!purgeIsOver(state, command.now)) throw blobPurging();
        if (!command.stored) throw blobAbsent();
        return [{ type: 'BlobStored', data: { sha256: command.sha256, storage_key: command.storageKey, bytes: command.bytes } }, referenced];
      }
      case 'ReleaseBlob': {
        if (!state.refs.has(command.fileId)) return [];
        const released: BlobEvent = { type: 'BlobReleased', data: { file_id: command.fileId } };
        return state.refs.size === 1 ? [released, { type: 'BlobPurging', data: { at: command.now } }] : [released];
      }
      case 'FinishPurge':
        return state.status === 'purging' ? [{ type: 'BlobPurged', data: {} }] : [];
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'BlobStored':
        return { ...state, status: 'stored', storageKey: event.data.storage_key, purgingSince: null };
      case 'BlobReferenced':
        return { ...state, refs: new Set(state.refs).add(event.data.file_id) };
      case 'BlobReleased': {
        const refs = new Set(state.refs);
        refs.delete(event.data.file_id);
        return { ...state, refs };
      }
      case 'BlobPurging':
        return { ...state, status: 'purging', purgingSince: event.data.at };
      case 'BlobPurged':
        return { ...state, status: 'purged', purgingSince: null };
    }
  },
};
