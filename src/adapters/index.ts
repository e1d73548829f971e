/**
 * Picks and opens the adapter of each port from the configuration. Server adapters are imported
 * lazily so that the embedded default loads none of their client libraries.
 */
import type { Config } from '../config.js';
import type { ConnectionListener, Counters } from '../ports/counters.js';
import type { EventStore } from '../ports/event-store.js';
import type { Storage } from '../ports/storage.js';

/** The configured store; with an archive directory, the log is read with archived commits merged back. */
export async function openEventStore(config: Config['eventStore'], onConnection?: ConnectionListener): Promise<EventStore> {
  const store = await openAdapter(config, onConnection);
  if (!config.archiveDir) return store;
  const { withArchive } = await import('../archive/usage-archive.js');
  return withArchive(store, config.archiveDir);
}

async function openAdapter(config: Config['eventStore'], onConnection?: ConnectionListener): Promise<EventStore> {
  switch (config.kind) {
    case 'sqlite': {
      const { SqliteEventStore } = await import('./event-store/sqlite.js');
      return new SqliteEventStore({ file: config.file, readCacheBytes: config.readCacheBytes });
    }
    case 'nats': {
      const { NatsEventStore } = await import('./event-store/nats.js');
      // Subjects are named after the stream, so two installations can share one NATS server.
      return NatsEventStore.connect({ servers: config.url, streamName: config.stream, subjectPrefix: `ev.${config.stream}`, ...(onConnection && { onConnection }) });
    }
    case 'kurrentdb': {
      const { KurrentDbEventStore } = await import('./event-store/kurrentdb.js');
      return KurrentDbEventStore.connect({ connectionString: config.url });
    }
  }
}

export async function openCounters(config: Config['counters'], onConnection?: ConnectionListener): Promise<Counters> {
  switch (config.kind) {
    case 'memory': {
      const { MemoryCounters } = await import('./counters/memory.js');
      return new MemoryCounters();
    }
    case 'redis': {
      const { RedisCounters } = await import('./counters/redis.js');
      const counters = new RedisCounters({ host: config.host, port: config.port, password: config.password, db: config.db, keyPrefix: config.keyPrefix, ...(onConnection && { onConnection }) });
      await counters.ping();
      return counters;
    }
  }
}

/** The file storage: a local directory, or an S3-compatible bucket (its SDK loaded only then). */
export async function openStorage(config: Config['files']['storage']): Promise<Storage> {
  switch (config.kind) {
    case 'local': {
      const { LocalStorage } = await import('./storage/local.js');
      return new LocalStorage(config.dir);
    }
    case 's3': {
      const { S3Storage } = await import('./storage/s3.js');
      return new S3Storage(config);
    }
  }
}
