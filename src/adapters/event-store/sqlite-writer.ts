/**
 * The embedded event log's writer thread. Every append to a log file goes through here, so the
 * fsync that makes each commit durable (synchronous=FULL) blocks this thread, not the one serving
 * requests. After each commit it broadcasts the commit itself, as JSON text, to every connection
 * to the file in this process (the serving thread's, the projector thread's) over a
 * BroadcastChannel, so that their subscribers wake at once and need not read it back from the file.
 */
import { BroadcastChannel } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { serveThread } from '../../threads.js';
import { appendChannelName, commitWriter, configureLogConnection, type CommitRequest } from './sqlite-commit.js';

serveThread(async ({ file }: { file: string }) => {
  const db = new Database(file);
  configureLogConnection(db);
  const write = commitWriter(db);
  const appended = new BroadcastChannel(appendChannelName(file));
  return {
    commit(request: CommitRequest) {
      const { result, written } = write(request);
      // Just the position when there are no rows to hand over: the listeners read it back.
      appended.postMessage(written ?? result.position);
      return result;
    },
    close() {
      appended.close();
      db.close();
    },
  };
});
