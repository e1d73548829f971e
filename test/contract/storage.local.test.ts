import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStorage } from '../../src/adapters/index.js';
import { storageContract } from './storage.contract.js';

storageContract('local', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-storage-'));
  const storage = await openStorage({ kind: 'local', dir: join(dir, 'not-yet-made') });
  return {
    storage,
    // Temp files of unfinished puts start with a dot; no finished object does.
    leftovers: async () => {
      const entries = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
      return entries.filter((entry) => entry.split('/').some((segment) => segment.startsWith('.')));
    },
    cleanup: async () => {
      await storage.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
