import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite.js';
import { eventStoreContract } from './event-store.contract.js';

eventStoreContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sy-es-'));
  const file = join(dir, 'events.db');
  let store = new SqliteEventStore({ file, pollIntervalMs: 50 });
  return {
    get store() {
      return store;
    },
    reopen: async () => {
      await store.close();
      store = new SqliteEventStore({ file, pollIntervalMs: 50 });
      return store;
    },
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
